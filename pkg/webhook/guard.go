package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// addressRange is one range of addresses that are not the public internet,
// with the class a refusal names (never the address: a user could map the
// cluster's internal addresses from it).
type addressRange struct {
	prefix netip.Prefix
	class  string
	// sealed ranges (link-local, cloud metadata) open only for an address
	// listed exactly, never by a wider allowed CIDR.
	sealed bool
}

func r(cidr, class string) addressRange {
	return addressRange{prefix: netip.MustParsePrefix(cidr), class: class}
}

func sealed(cidr, class string) addressRange {
	return addressRange{prefix: netip.MustParsePrefix(cidr), class: class, sealed: true}
}

// refusedRanges are the non-global entries of the IANA IPv4 and IPv6
// Special-Purpose Address Registries, multicast, and the cloud metadata
// endpoints that sit on otherwise public or private addresses. More
// specific entries come first: the first match names the class.
var refusedRanges = []addressRange{
	sealed("169.254.169.254/32", "cloud metadata"),
	sealed("168.63.129.16/32", "cloud metadata"),   // Azure WireServer, a public address
	sealed("100.100.100.200/32", "cloud metadata"), // Alibaba Cloud
	sealed("fd00:ec2::254/128", "cloud metadata"),  // AWS IMDS over IPv6
	r("0.0.0.0/8", "this-network"),
	r("10.0.0.0/8", "private"),
	r("100.64.0.0/10", "shared (carrier-grade NAT)"),
	r("127.0.0.0/8", "loopback"),
	sealed("169.254.0.0/16", "link-local"),
	r("172.16.0.0/12", "private"),
	r("192.0.0.0/24", "IETF protocol assignments"),
	r("192.0.2.0/24", "documentation"),
	r("192.31.196.0/24", "AS112"),
	r("192.52.193.0/24", "AMT"),
	r("192.88.99.0/24", "6to4 relay anycast"),
	r("192.168.0.0/16", "private"),
	r("192.175.48.0/24", "AS112"),
	r("198.18.0.0/15", "benchmarking"),
	r("198.51.100.0/24", "documentation"),
	r("203.0.113.0/24", "documentation"),
	r("224.0.0.0/4", "multicast"),
	r("240.0.0.0/4", "reserved"), // 255.255.255.255 included
	r("::/128", "unspecified"),
	r("::1/128", "loopback"),
	r("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
	r("100::/64", "discard-only"),
	r("100:0:0:1::/64", "dummy prefix"),
	r("2001::/23", "IETF protocol assignments"), // Teredo included
	r("2001:db8::/32", "documentation"),
	r("2002::/16", "6to4"),
	r("2620:4f:8000::/48", "AS112"),
	r("3fff::/20", "documentation"),
	r("5f00::/16", "segment routing (SRv6)"),
	r("fc00::/7", "unique-local (private)"),
	sealed("fe80::/10", "link-local"),
	r("fec0::/10", "site-local"),
	r("ff00::/8", "multicast"),
}

// IPv6 forms that carry an IPv4 address in their last 32 bits, checked as
// that IPv4 address: NAT64's well-known prefix (RFC 6052), where the
// translator connects to it; IPv4-translated addresses (RFC 2765); and the
// deprecated IPv4-compatible ones (RFC 4291), bar :: and ::1. IPv4-mapped
// ones (::ffff:0:0/96) are unmapped first.
var embedsIPv4 = []netip.Prefix{
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("::ffff:0:0:0/96"),
	netip.MustParsePrefix("::/96"),
}

// globalUnicast is where IANA assigns global IPv6 unicast addresses: an
// IPv6 address outside it is never the public internet.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// asIPv4 returns the IPv4 address addr stands for, or addr.
func asIPv4(addr netip.Addr) netip.Addr {
	addr = addr.Unmap()
	if !addr.Is6() || addr == netip.IPv6Unspecified() || addr == netip.IPv6Loopback() {
		return addr
	}
	for _, p := range embedsIPv4 {
		if p.Contains(addr) {
			b := addr.As16()
			return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		}
	}
	return addr
}

// RefusedError is the guard's refusal: the class of address, not the address.
type RefusedError struct{ Class string }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: the receiver resolved to a %s address", ErrAddressRefused, e.Class)
}

// Unwrap makes errors.Is(err, ErrAddressRefused) hold.
func (e *RefusedError) Unwrap() error { return ErrAddressRefused }

// Guard decides which resolved addresses a webhook may connect to.
type Guard struct {
	// Allowed lists CIDRs that are allowed even though they are not public
	// (for example a receiver inside the cluster, or a test's loopback one).
	// Link-local and cloud metadata addresses are allowed only when listed
	// exactly, as single addresses.
	Allowed []netip.Prefix
}

// Check returns a *RefusedError when addr must not be dialled.
func (g Guard) Check(addr netip.Addr) error {
	addr = asIPv4(addr)
	if !addr.IsValid() {
		return &RefusedError{Class: "invalid"}
	}
	for _, rr := range refusedRanges {
		if rr.prefix.Contains(addr) {
			if g.allows(addr, rr.sealed) {
				return nil
			}
			return &RefusedError{Class: rr.class}
		}
	}
	if addr.Is6() && !globalUnicast.Contains(addr) && !g.allows(addr, false) {
		return &RefusedError{Class: "non-global IPv6"}
	}
	return nil
}

func (g Guard) allows(addr netip.Addr, exactOnly bool) bool {
	for _, p := range g.Allowed {
		if p.Contains(addr) && (!exactOnly || p.IsSingleIP()) {
			return true
		}
	}
	return false
}

// control is a net.Dialer Control function: it runs after name resolution,
// on the exact address about to be connected, so DNS rebinding cannot slip a
// private address past the check.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{Class: "unparsable"}
	}
	return g.Check(ap.Addr())
}

// refusal returns the guard's refusal inside err (a dial error names the
// address; the refusal does not), or nil.
func refusal(err error) error {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused
	}
	return nil
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
