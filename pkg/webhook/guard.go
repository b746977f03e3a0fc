package webhook

import (
	"fmt"
	"net/netip"
	"syscall"
)

// sharedAddressSpace is 100.64.0.0/10 (RFC 6598, carrier-grade NAT), which
// netip does not count as private but which is not the public internet.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// Guard decides which resolved addresses a webhook may connect to.
type Guard struct {
	// Allowed lists CIDRs that are allowed even though they are not public
	// (for example a receiver inside the cluster, or a test's loopback one).
	Allowed []netip.Prefix
}

// Check returns an error when addr must not be dialled.
func (g Guard) Check(addr netip.Addr) error {
	addr = addr.Unmap()
	for _, p := range g.Allowed {
		if p.Contains(addr) {
			return nil
		}
	}
	switch {
	case addr.IsLoopback(), addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast(),
		addr.IsInterfaceLocalMulticast(), addr.IsMulticast(), addr.IsPrivate(),
		addr.IsUnspecified(), sharedAddressSpace.Contains(addr), !addr.IsValid():
		return fmt.Errorf("%w: %s is not a public address", ErrAddressRefused, addr)
	}
	return nil
}

// control is a net.Dialer Control function: it runs after name resolution,
// on the exact address about to be connected, so DNS rebinding cannot slip a
// private address past the check.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address %q", ErrAddressRefused, address)
	}
	return g.Check(ap.Addr())
}

// ParseCIDRs parses a list of CIDRs (or single addresses) for Guard.Allowed.
func ParseCIDRs(items []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(items))
	for _, item := range items {
		if p, err := netip.ParsePrefix(item); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("invalid CIDR or address %q", item)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
