package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/quarryhq/quarry/research"
)

// metrics are the server's Prometheus series, on a registry of its own.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	tokens   *prometheus.CounterVec
	streams  *prometheus.GaugeVec
	rejected *prometheus.CounterVec
	finished *prometheus.CounterVec
	handler  http.Handler
	byStatus *prometheus.Desc
	queue    *prometheus.Desc
	jobs     *prometheus.Desc
	srv      *Server
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quarry_http_requests_total", Help: "HTTP requests by route, method and status code."},
			[]string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "quarry_http_request_duration_seconds", Help: "HTTP request latency by route (streams: until the first byte).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"route"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quarry_llm_tokens_total", Help: "LLM tokens of the researches this process finished."},
			[]string{"direction"}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "quarry_event_streams", Help: "Open event streams by transport."}, []string{"transport"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quarry_http_rejected_total", Help: "Requests refused by a limit."},
			[]string{"reason"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quarry_researches_finished_total", Help: "Researches this process ran to an end, by status."},
			[]string{"status"}),
		byStatus: prometheus.NewDesc("quarry_researches", "Stored researches by status.", []string{"status"}, nil),
		queue:    prometheus.NewDesc("quarry_queue_depth", "Researches waiting for a worker (pending).", nil, nil),
		jobs:     prometheus.NewDesc("quarry_jobs", "River jobs in the store by kind and state (finished ones until River cleans them out: completed and cancelled after 24 h, discarded after 7 days).", []string{"kind", "state"}, nil),
		srv:      s,
	}
	m.reg.MustRegister(m.requests, m.latency, m.tokens, m.streams, m.rejected, m.finished, m,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// Describe implements prometheus.Collector for the store-backed series.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.byStatus
	ch <- m.queue
	ch <- m.jobs
}

// Collect reads research counts from the store at scrape time.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := m.srv.store.ResearchCounts(ctx)
	if err != nil {
		m.srv.log.Warn("metrics: research counts", "err", err)
		return
	}
	for _, st := range []string{research.StatusPending, research.StatusProcessing, research.StatusCompleted, research.StatusFailed, research.StatusCanceled} {
		ch <- prometheus.MustNewConstMetric(m.byStatus, prometheus.GaugeValue, float64(counts[st]), st)
	}
	ch <- prometheus.MustNewConstMetric(m.queue, prometheus.GaugeValue, float64(counts[research.StatusPending]))
	jobs, err := m.srv.jobs.Counts(ctx)
	if err != nil {
		m.srv.log.Warn("metrics: job counts", "err", err)
		return
	}
	for _, c := range jobs {
		ch <- prometheus.MustNewConstMetric(m.jobs, prometheus.GaugeValue, float64(c.N), c.Kind, c.State)
	}
}

func (m *metrics) researchDone(r *research.Research) {
	m.finished.WithLabelValues(r.Status).Inc()
	m.tokens.WithLabelValues("input").Add(float64(r.Usage.InputTokens))
	m.tokens.WithLabelValues("output").Add(float64(r.Usage.OutputTokens))
}

// statusWriter records the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Hijack hands the connection to a WebSocket.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.code = http.StatusSwitchingProtocols
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Flush sends what is buffered (event streams).
func (w *statusWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush that says when the client is gone.
func (w *statusWriter) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument counts a route's requests and times them.
func (m *metrics) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		if code == http.StatusTooManyRequests {
			m.rejected.WithLabelValues("rate").Inc()
		}
		m.requests.WithLabelValues(route, r.Method, strconv.Itoa(code)).Inc()
		m.latency.WithLabelValues(route).Observe(time.Since(t0).Seconds())
	})
}
