package fetch

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// BlockedError is returned when a connection would reach an address the SSRF
// guard refuses. It is raised at dial time, after DNS resolution, so a
// hostname that resolves to a private address or a redirect to one is
// refused the same way as a literal IP.
type BlockedError struct {
	Addr   netip.Addr
	Reason string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s (private and internal addresses are blocked; pass --allow-private or set QUARRY_ALLOW_PRIVATE=1 to allow them)", e.Addr, e.Reason)
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT; Alibaba Cloud's metadata service
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	ietfProto   = netip.MustParsePrefix("192.0.0.0/24")
	benchmark   = netip.MustParsePrefix("198.18.0.0/15")
	reserved    = netip.MustParsePrefix("240.0.0.0/4")
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
	awsIPv6Meta = netip.MustParseAddr("fd00:ec2::254")
	metadata4   = netip.MustParseAddr("169.254.169.254")
)

// blockedReason says why addr must not be reached, or "" when it may.
func blockedReason(addr netip.Addr) string {
	addr = addr.Unmap()
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
	case ietfProto.Contains(addr) || benchmark.Contains(addr) || reserved.Contains(addr):
		return "reserved address"
	case nat64.Contains(addr):
		b := addr.As16()
		if r := blockedReason(netip.AddrFrom4([4]byte(b[12:]))); r != "" {
			return r + " behind NAT64"
		}
	case sixToFour.Contains(addr):
		b := addr.As16()
		if r := blockedReason(netip.AddrFrom4([4]byte(b[2:6]))); r != "" {
			return r + " behind 6to4"
		}
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
