package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/app/bench/stats"
)

// formatFloat formats v with dec decimals and thousands separators, which
// keeps five-digit job rates readable in tables and docs. NaN and infinities
// print as "n/a" rather than leaking Go's spelling into the docs.
func formatFloat(v float64, dec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	out := sign + groupThousands(intPart)
	if hasFrac {
		out += "." + frac
	}
	return out
}

func formatInt(n int64) string {
	if n < 0 {
		return "-" + groupThousands(strconv.FormatInt(-n, 10))
	}
	return groupThousands(strconv.FormatInt(n, 10))
}

func groupThousands(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	head := len(digits) % 3
	if head > 0 {
		b.WriteString(digits[:head])
	}
	for i := head; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

// formatRate prints a rate with precision that shrinks as it grows: a
// decimal of 12,345 jobs/s is noise, one of 4.5 jobs/s is not.
func formatRate(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return formatFloat(v, 0)
	case a >= 10:
		return formatFloat(v, 1)
	default:
		return formatFloat(v, 2)
	}
}

// formatMs prints milliseconds with about three significant digits; the
// histogram behind them has no more than that.
func formatMs(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 1:
		return formatFloat(v, 3)
	case a < 10:
		return formatFloat(v, 2)
	case a < 100:
		return formatFloat(v, 1)
	default:
		return formatFloat(v, 0)
	}
}

// formatRatio prints factors and efficiencies, which are close to 1.
func formatRatio(v float64) string {
	return formatFloat(v, 2)
}

// formatPercentiles prints p50 / p95 / p99 / max in milliseconds.
func formatPercentiles(p stats.Percentiles) string {
	return fmt.Sprintf("%s / %s / %s / %s", formatMs(p.P50), formatMs(p.P95), formatMs(p.P99), formatMs(p.Max))
}

// formatAny prints a database-side figure whose type the report does not
// know in advance; JSON decoding turns every number into float64, so whole
// floats print without decimals.
func formatAny(v any) string {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return formatInt(int64(x))
		}
		return formatFloat(x, 2)
	case float32:
		return formatAny(float64(x))
	case int:
		return formatInt(int64(x))
	case int64:
		return formatInt(x)
	case int32:
		return formatInt(int64(x))
	case uint64:
		if x <= math.MaxInt64 {
			return formatInt(int64(x))
		}
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// sortedKeys returns the keys of m in order, so that tables are stable from
// run to run.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
