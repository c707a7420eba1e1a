package main

import (
	"cmp"
	"fmt"
	"net"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/server"
)

// serveCmd is quarry serve: its flags, then the server started on the app;
// the flag list makes it long.
func (a *cli) serveCmd() *cobra.Command {
	var opt server.Options
	var addr, cors string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API (researches, live events, threads, knowledge bases) until Ctrl-C or SIGTERM",
		Long: `Serves Quarry's HTTP API on --addr (or QUARRY_ADDR; default 127.0.0.1:8080):
JSON under /v1, research events over WebSocket and Server-Sent Events,
/healthz, /readyz, /metrics and /openapi.json.

On a loopback address it is open without a token while no token exists; once
one does (quarry token create), every request needs one. A non-loopback
address with no token refuses to start unless --insecure is given.
Background work — researches, crawls, scheduled re-crawls, purges — is River
jobs in the store, run by this process (--workers; 0 serves only) and by any
quarry serve or quarry worker sharing the database. SIGTERM stops accepting, lets requests finish,
checkpoints running researches (the next start resumes them) and closes
event streams with a "reconnect" close.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if !cmd.Flags().Changed("addr") {
				if v, ok := a.env("QUARRY_ADDR"); ok && v != "" {
					addr = v
				}
			}
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return usageError{fmt.Errorf("addr: must be host:port, got %q", addr)}
			}
			if opt.Workers < -1 || opt.Workers > 64 {
				return usageError{fmt.Errorf("workers: must be between 0 (none here) and 64, got %d", opt.Workers)}
			}
			if opt.Workers == 0 {
				opt.Workers = -1 // the library's "none"; its zero is the default
			}
			if err := serveLimits(opt, grace); err != nil {
				return usageError{err}
			}
			if opt.RescueAfter != 0 && opt.RescueAfter < time.Second {
				return usageError{fmt.Errorf("rescue-after: must be at least 1s, got %s", opt.RescueAfter)}
			}
			for _, o := range strings.Split(cors, ",") {
				if o = strings.TrimSpace(o); o != "" {
					if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
						return usageError{fmt.Errorf("cors-origin: must be an origin such as https://app.example.com, got %q", o)}
					}
					opt.CORSOrigins = append(opt.CORSOrigins, strings.TrimRight(o, "/"))
				}
			}
			srv, err := server.New(ctx, a.q(), opt, a.logger)
			if err != nil {
				return err
			}
			if err := srv.CheckExposure(ctx, addr); err != nil {
				return usageError{err}
			}
			if opt.Insecure && !server.Loopback(addr) {
				fmt.Fprintf(a.stderr, "quarry serve: WARNING: --insecure: %s is reachable from other machines and requests without a token are refused only if a token exists; anyone who can reach it may run researches and change knowledge bases\n", addr)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("addr: %w", err)
			}
			eng, err := a.q().Engine()
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintf(a.stderr, "quarry serve: listening on http://%s (engine %s; API under /v1, document at /openapi.json); Ctrl-C stops\n", ln.Addr(), eng.Name())
			return srv.Serve(ctx, ln, grace)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address host:port [$QUARRY_ADDR]")
	fl.BoolVar(&opt.Insecure, "insecure", false, "allow a non-loopback address with no token: anyone who can reach it gets full access")
	fl.IntVar(&opt.Workers, "workers", 2, "researches run at once in this process (0: none, serve only; quarry worker processes run the jobs)")
	fl.DurationVar(&opt.RescueAfter, "rescue-after", jobs.DefaultRescueAfter, "how long a job whose process died waits before it runs again")
	fl.Float64Var(&opt.Rate, "rate", 20, "requests per second per token (or loopback client); -1 turns it off")
	fl.IntVar(&opt.Burst, "burst", 40, "burst of requests per token")
	fl.Float64Var(&opt.IPRate, "ip-rate", 50, "requests per second per client IP address; -1 turns it off")
	fl.IntVar(&opt.IPBurst, "ip-burst", 100, "burst of requests per client IP address")
	fl.IntVar(&opt.MaxResearches, "max-researches", 4, "researches one token may have pending or running at once")
	fl.IntVar(&opt.MaxConns, "max-conns", 1024, "open connections at most (more wait to be accepted)")
	fl.IntVar(&opt.MaxConnsPerIP, "max-conns-per-ip", 0, "open connections from one IP address at most, more are closed at once (0: max-conns/16)")
	fl.Int64Var(&opt.MaxBodyBytes, "max-body", 1<<20, "largest JSON request body in bytes")
	fl.Int64Var(&opt.MaxUploadBytes, "max-upload", 64<<20, "largest upload in bytes")
	fl.Int64Var(&opt.SyncUploadBytes, "sync-upload", 8<<20, "uploads up to this many bytes are ingested before the answer; larger ones answer 202 and are ingested in the background")
	fl.StringVar(&cors, "cors-origin", "", "origins allowed to call the API from a browser, comma-separated (none by default)")
	fl.DurationVar(&grace, "grace", 30*time.Second, "how long a shutdown waits for running requests")
	return cmd
}

// serveLimits checks the serve flags that are counts, sizes and rates: a
// value out of range is an error naming the flag, never a silent default
// (a negative rate would have turned the limit off).
func serveLimits(opt server.Options, grace time.Duration) error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"rate", opt.Rate}, {"ip-rate", opt.IPRate}} {
		if r.v != -1 && r.v <= 0 {
			return fmt.Errorf("%s: must be more than 0 requests per second, or -1 for no limit, got %g", r.name, r.v)
		}
	}
	for _, c := range []struct {
		name  string
		v     int64
		least int64
	}{
		{"burst", int64(opt.Burst), 1}, {"ip-burst", int64(opt.IPBurst), 1},
		{"max-researches", int64(opt.MaxResearches), 1}, {"max-conns", int64(opt.MaxConns), 1},
		{"max-conns-per-ip", int64(opt.MaxConnsPerIP), 0},
		{"max-body", opt.MaxBodyBytes, 1}, {"max-upload", opt.MaxUploadBytes, 1}, {"sync-upload", opt.SyncUploadBytes, 1},
	} {
		if c.v < c.least {
			return fmt.Errorf("%s: must be at least %d, got %d", c.name, c.least, c.v)
		}
	}
	if grace < 0 {
		return fmt.Errorf("grace: must not be negative, got %s", grace)
	}
	return nil
}

func (a *cli) tokenCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage API tokens for quarry serve: create, list, revoke"}
	var scopes []string
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a token and print it once (only its hash is stored)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			secret, t, err := server.CreateToken(cmd.Context(), st, args[0], scopes, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, secret)
			fmt.Fprintf(a.stderr, "quarry: token %q (%s) created with scopes %s; it is shown only now — send it as Authorization: Bearer <token>\n", t.Name, t.ID, strings.Join(t.Scopes, ","))
			return nil
		},
	}
	create.Flags().StringSliceVar(&scopes, "scope", nil, "scopes: research (researches, events, threads), kb (knowledge bases); comma-separated")
	list := &cobra.Command{
		Use:   "list",
		Short: "List tokens (names, scopes, dates; never the secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			ts, err := st.TokenList(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tID\tSCOPES\tCREATED\tREVOKED")
			for _, t := range ts {
				revoked := "-"
				if t.RevokedAt != nil {
					revoked = t.RevokedAt.Local().Format("2006-01-02 15:04")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.ID, cmp.Or(strings.Join(t.Scopes, ","), "-"), t.CreatedAt.Local().Format("2006-01-02 15:04"), revoked)
			}
			return tw.Flush()
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke NAME|ID",
		Short: "Revoke a token; requests with it are refused from now on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			if err := st.TokenRevoke(cmd.Context(), args[0], time.Now()); err != nil {
				return fmt.Errorf("token %q: %w", args[0], err)
			}
			fmt.Fprintf(a.stdout, "revoked token %q\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}
