package webhook

import (
	"fmt"
	"net/netip"
	"syscall"
)

// Ranges netip does not classify but which are not the public internet.
var (
	// sharedAddressSpace is 100.64.0.0/10 (RFC 6598, carrier-grade NAT).
	sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")
	// thisNetwork is 0.0.0.0/8 (RFC 1122), of which netip only flags 0.0.0.0.
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	// nat64 is the well-known NAT64 prefix (RFC 6052): its last 32 bits are an
	// IPv4 address the translator connects to, checked like any IPv4 address.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
)

// Guard decides which resolved addresses a webhook may connect to.
type Guard struct {
	// Allowed lists CIDRs that are allowed even though they are not public
	// (for example a receiver inside the cluster, or a test's loopback one).
	Allowed []netip.Prefix
}

// Check returns an error when addr must not be dialled.
func (g Guard) Check(addr netip.Addr) error {
	addr = addr.Unmap()
	if addr.Is6() && nat64.Contains(addr) {
		b := addr.As16()
		addr = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	for _, p := range g.Allowed {
		if p.Contains(addr) {
			return nil
		}
	}
	switch {
	case addr.IsLoopback(), addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast(),
		addr.IsInterfaceLocalMulticast(), addr.IsMulticast(), addr.IsPrivate(),
		addr.IsUnspecified(), sharedAddressSpace.Contains(addr), thisNetwork.Contains(addr), !addr.IsValid():
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
// IPv4-mapped IPv6 entries (::ffff:a.b.c.d) become their IPv4 form, as Check
// compares unmapped addresses.
func ParseCIDRs(items []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(items))
	for _, item := range items {
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, addrErr := netip.ParseAddr(item)
			if addrErr != nil {
				return nil, fmt.Errorf("invalid CIDR or address %q", item)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() {
			if p.Bits() < 96 {
				return nil, fmt.Errorf("invalid CIDR %q: an IPv4-mapped prefix needs at least 96 bits", item)
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
