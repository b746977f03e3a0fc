package plugin

import (
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime"
)

// escaped returns a copy of obj in which every string (fields, slice
// elements, map keys and values) shows its control characters and
// bidirectional formatting characters as Go escapes (\x1b, \r, \u202e).
// Agents write outputs and messages; rendered raw, that text could move a
// terminal's cursor, rewrite earlier lines or reorder what a person reads
// before approving. -o json and -o yaml escape on their own.
func escaped(obj runtime.Object) runtime.Object {
	out := obj.DeepCopyObject()
	escapeValue(reflect.ValueOf(out))
	return out
}

func escapeValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			escapeValue(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			escapeValue(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			escapeValue(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() || !v.CanSet() {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			k.Set(it.Key())
			e.Set(it.Value())
			escapeValue(k)
			escapeValue(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		if v.CanSet() {
			v.SetString(escapeText(v.String()))
		}
	}
}

// escapeText escapes what must not reach a terminal raw; invalid UTF-8
// becomes U+FFFD.
func escapeText(s string) string {
	if !strings.ContainsFunc(s, unprintable) && strings.ToValidUTF8(s, "\uFFFD") == s {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unprintable(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unprintable: C0 and C1 controls and DEL, and the bidirectional marks,
// embeddings, overrides and isolates (the "Trojan Source" characters).
func unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
