package fetch

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/quarryhq/quarry/errcode"
)

// BlockedError is returned when a connection would reach an address the SSRF
// guard refuses. It is raised at dial time, after DNS resolution, so a
// hostname that resolves to a private address or a redirect to one is
// refused the same way as a literal IP.
type BlockedError struct {
	Addr   netip.Addr
	Reason string
}

// ErrorCode implements errcode.Coder: the address is not to be reached.
func (e *BlockedError) ErrorCode() errcode.Code { return errcode.Forbidden }

func (e *BlockedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s (private and internal addresses are blocked; pass --allow-private or set QUARRY_ALLOW_PRIVATE=1 to allow them)", e.Addr, e.Reason)
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT; Alibaba Cloud's metadata service
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	metadata4   = netip.MustParseAddr("169.254.169.254")
	awsIPv6Meta = netip.MustParseAddr("fd00:ec2::254")

	// reserved4 are the IPv4 blocks of the IANA special-purpose registry
	// that are not reachable public hosts and that the checks above do
	// not already name.
	reserved4 = prefixes(
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"240.0.0.0/4",     // reserved, and the limited broadcast address
	)

	// IPv6 is allowed only inside global unicast (2000::/3), minus the
	// blocks there that are not public hosts; everything outside it (the
	// IPv4-compatible ::/96, site-local fec0::/10, the local-use NAT64
	// 64:ff9b:1::/48, discard-only 100::/64, …) is refused, except the
	// well-known NAT64 prefix, which is judged by the IPv4 address inside.
	global6   = netip.MustParsePrefix("2000::/3")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	teredo    = netip.MustParsePrefix("2001::/32")
	reserved6 = prefixes(
		"2001:2::/48",   // benchmarking
		"2001:10::/28",  // ORCHID (deprecated)
		"2001:20::/28",  // ORCHIDv2
		"2001:db8::/32", // documentation
		"3fff::/20",     // documentation
	)
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func inAny(ps []netip.Prefix, addr netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// blockedReason says why addr must not be reached, or "" when it may.
// IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, Teredo) are
// judged by that address too.
func blockedReason(addr netip.Addr) string {
	addr = addr.WithZone("").Unmap()
	switch {
	case addr == metadata4 || addr == awsIPv6Meta:
		return "cloud metadata address"
	case addr.IsLoopback():
		return "loopback address"
	case addr.IsUnspecified() || thisNetwork.Contains(addr):
		return "unspecified address"
	case addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast():
		return "link-local address"
	case addr.Is6() && addr.IsPrivate():
		return "unique-local address"
	case addr.IsPrivate():
		return "private address"
	case sharedSpace.Contains(addr):
		return "shared (carrier-grade NAT) address"
	case addr.IsMulticast() || addr.IsInterfaceLocalMulticast():
		return "multicast address"
	case addr.Is4():
		if inAny(reserved4, addr) {
			return "reserved address"
		}
		return ""
	}
	b := addr.As16()
	switch {
	case nat64.Contains(addr):
		return embedded(netip.AddrFrom4([4]byte(b[12:])), "NAT64")
	case !global6.Contains(addr):
		if [12]byte(b[:12]) == [12]byte{} {
			return "IPv4-compatible IPv6 address (deprecated, never public)"
		}
		return "IPv6 address outside global unicast (2000::/3)"
	case sixToFour.Contains(addr):
		return embedded(netip.AddrFrom4([4]byte(b[2:6])), "6to4")
	case teredo.Contains(addr):
		// RFC 4380: the server's address in bits 32–63, the client's
		// inverted in the last 32.
		if r := embedded(netip.AddrFrom4([4]byte(b[4:8])), "Teredo"); r != "" {
			return r
		}
		var c [4]byte
		for i := range c {
			c[i] = ^b[12+i]
		}
		return embedded(netip.AddrFrom4(c), "Teredo")
	case inAny(reserved6, addr):
		return "reserved address"
	}
	return ""
}

// embedded judges the IPv4 address inside an IPv6 translation form.
func embedded(v4 netip.Addr, form string) string {
	if r := blockedReason(v4); r != "" {
		return r + " behind " + form
	}
	return ""
}

// Check reports whether addr is one the guard refuses, as a *BlockedError.
func Check(addr netip.Addr) error {
	if r := blockedReason(addr); r != "" {
		return &BlockedError{Addr: addr.Unmap(), Reason: r}
	}
	return nil
}

// dialControl returns the check run after DNS resolution for every
// connection attempt; addresses inside allow pass.
func dialControl(allow []netip.Prefix) func(string, string, syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return fmt.Errorf("dial %s: %w", address, err)
		}
		addr, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("dial %s: not an IP address", address)
		}
		addr = addr.WithZone("").Unmap()
		for _, p := range allow {
			if p.Contains(addr) {
				return nil
			}
		}
		return Check(addr)
	}
}
