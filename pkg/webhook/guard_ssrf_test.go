package webhook

import (
	"net/netip"
	"testing"

	"code.dny.dev/ssrf"
	"github.com/stretchr/testify/assert"
)

// TestGuardRefusesWhatSSRFRefuses checks the guard against the deny lists
// of code.dny.dev/ssrf, kept from the IANA registries: the first and last
// address of every denied IPv4 prefix, in its IPv4 form and in each IPv6
// form that carries an IPv4 address, and of every denied IPv6 prefix.
func TestGuardRefusesWhatSSRFRefuses(t *testing.T) {
	forms := map[string]func(netip.Addr) netip.Addr{
		"IPv4":            func(a netip.Addr) netip.Addr { return a },
		"IPv4-mapped":     func(a netip.Addr) netip.Addr { return embed("::ffff:0:0", a) },
		"IPv4-compatible": func(a netip.Addr) netip.Addr { return embed("::", a) },
		"IPv4-translated": func(a netip.Addr) netip.Addr { return embed("::ffff:0:0:0", a) },
		"NAT64":           func(a netip.Addr) netip.Addr { return embed("64:ff9b::", a) },
	}
	guardian := ssrf.New(ssrf.WithAnyPort())
	for _, p := range ssrf.IPv4DeniedPrefixes {
		for _, a := range []netip.Addr{p.Addr(), last(p)} {
			for name, form := range forms {
				addr := form(a)
				assert.Error(t, Guard{}.Check(addr), "%s form %s of %s (in %s)", name, addr, a, p)
			}
		}
	}
	for _, p := range ssrf.IPv6DeniedPrefixes {
		for _, a := range []netip.Addr{p.Addr(), last(p)} {
			assert.Error(t, Guard{}.Check(a), "%s (in %s)", a, p)
			assert.Error(t, guardian.SafeAddr(a), "the library refuses %s too", a)
		}
	}
	for _, s := range []string{"::", "::1", "100::1", "4000::1", "fc00::1", "fe80::1", "ff02::1", "1::1"} {
		a := netip.MustParseAddr(s)
		assert.Error(t, guardian.SafeAddr(a), "the library refuses %s: outside global unicast", a)
		assert.Error(t, Guard{}.Check(a), "%s is outside global unicast", a)
	}
	for _, s := range []string{"93.184.216.34", "2606:2800:220:1::1"} {
		a := netip.MustParseAddr(s)
		assert.NoError(t, guardian.SafeAddr(a), "the library admits %s", a)
		assert.NoError(t, Guard{}.Check(a), "%s is public", a)
	}
	// Unlike the library, the guard lets an IPv6-only cluster reach a
	// public IPv4 receiver through NAT64.
	assert.NoError(t, Guard{}.Check(netip.MustParseAddr("64:ff9b::5db8:d822")))
}

// embed puts the IPv4 address a into the last 32 bits of prefix.
func embed(prefix string, a netip.Addr) netip.Addr {
	b := netip.MustParseAddr(prefix).As16()
	v4 := a.As4()
	copy(b[12:], v4[:])
	return netip.AddrFrom16(b)
}

// last returns the last address of p.
func last(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
