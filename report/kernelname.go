package report

import "strings"

// shortKernel shortens a device kernel's name for display: the return type, parameter lists and
// anonymous namespaces go, and template arguments fold to "<…>", so
// "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, 2>(at::cuda::…)"
// reads "at::native::indexSelectLargeIndex<…>". Copies and memsets ("Memcpy HtoD (Pinned ->
// Device)") keep their names. The full name goes in a tooltip beside it.
func shortKernel(name string) string {
	if strings.HasPrefix(name, "Memcpy") || strings.HasPrefix(name, "Memset") {
		return name
	}
	s := strings.TrimPrefix(name, "void ")
	s = strings.ReplaceAll(s, "(anonymous namespace)::", "")
	var b strings.Builder
	angle, paren := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '<':
			if angle == 0 && paren == 0 {
				b.WriteString("<…>")
			}
			angle++
			continue
		case '>':
			if angle > 0 {
				angle--
				continue
			}
		case '(':
			if angle == 0 && paren == 0 {
				// The parameter list: what follows (cv-qualifiers, lambdas' bodies) is detail.
				return finishShort(b.String(), name)
			}
			paren++
			continue
		case ')':
			if paren > 0 {
				paren--
				continue
			}
		}
		if angle == 0 && paren == 0 {
			b.WriteByte(c)
		}
	}
	return finishShort(b.String(), name)
}

func finishShort(short, name string) string {
	short = strings.TrimSpace(short)
	if short == "" {
		return name
	}
	return short
}
