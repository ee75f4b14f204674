package stats

import "sort"

// SteadyFraction is the share of the reference rate a window must reach to
// count as past warm-up. 90 % is loose enough that ordinary window-to-window
// noise on a plateau does not delay the cut, and tight enough that a ramp
// (connection pools filling, caches and the planner warming up) stays out.
const SteadyFraction = 0.9

// SteadyRule describes, in a sentence the bench report can quote, how
// SteadyState separates warm-up from the steady state.
const SteadyRule = "Steady state: the reference rate is the median rate of the windows in the second half of the run; " +
	"warm-up ends at the first window reaching at least 90% of it; " +
	"a final window that is shorter than 90% of the window length or in which the queue drained is excluded; " +
	"the steady rate is jobs/seconds summed over the remaining windows " +
	"(runs with fewer than 3 such windows report the whole-run rate)."

// minSteadyWindows is the fewest windows for which a warm-up cut means
// anything: with one or two, a "second half" is a single window.
const minSteadyWindows = 3

// SteadyState decides where warm-up ends and returns the index of the first
// steady window and the steady-state rate in jobs per second. It applies
// SteadyRule:
//
//  1. The final window is a partial tail, and is excluded, when it lasted
//     less than 90 % of the nominal window length (the median length of the
//     other windows) or when the queue drained during it (its Backlog is 0
//     while the previous window's was not), because workers then sat idle for
//     part of it.
//  2. If fewer than 3 windows remain, there is too little to separate
//     warm-up from steady state: first is 0 and the rate is the whole-run
//     rate, total jobs over total seconds of all windows.
//  3. The reference rate is the median of the window rates in the second
//     half of the remaining windows (the middle one included when their
//     number is odd). The median, unlike the mean or the maximum, ignores a
//     single stall or burst.
//  4. Warm-up ends at the first window whose rate is at least SteadyFraction
//     of the reference. Such a window always exists, since at least one
//     second-half window reaches the median.
//  5. The steady rate is the sum of jobs over the sum of seconds of the
//     windows from first to the last remaining one, which weights windows by
//     their actual length rather than averaging their rates.
//
// An empty slice yields (0, 0).
func SteadyState(ws []Window) (first int, rate float64) {
	first, _, rate = SteadyRange(ws)
	return first, rate
}

// SteadyRange is SteadyState that also returns end, the index one past the
// last steady window, so that a chart or note can show exactly which windows
// the steady rate covers: ws[first:end]. In the whole-run fallback first is 0
// and end is len(ws).
func SteadyRange(ws []Window) (first, end int, rate float64) {
	end = len(ws)
	if end > 0 && partialTail(ws) {
		end--
	}
	if end < minSteadyWindows {
		return 0, len(ws), totalRate(ws)
	}

	ref := Median(rates(ws[end/2 : end]))
	if ref <= 0 {
		return 0, len(ws), totalRate(ws)
	}
	for first = 0; first < end; first++ {
		if ws[first].Rate >= SteadyFraction*ref {
			break
		}
	}
	return first, end, totalRate(ws[first:end])
}

// partialTail reports whether the last window is a partial tail according to
// rule 1 of SteadyState.
func partialTail(ws []Window) bool {
	n := len(ws)
	if n < 2 {
		return false
	}
	last, prev := ws[n-1], ws[n-2]
	if last.Backlog == 0 && prev.Backlog > 0 {
		return true
	}
	lengths := make([]float64, 0, n-1)
	for _, w := range ws[:n-1] {
		lengths = append(lengths, w.Seconds)
	}
	return last.Seconds < SteadyFraction*Median(lengths)
}

func rates(ws []Window) []float64 {
	out := make([]float64, len(ws))
	for i, w := range ws {
		out[i] = w.Rate
	}
	return out
}

// totalRate is jobs over seconds summed across ws.
func totalRate(ws []Window) float64 {
	var jobs int64
	var secs float64
	for _, w := range ws {
		jobs += w.Jobs
		secs += w.Seconds
	}
	return ratio(float64(jobs), secs)
}

// Median returns the median of xs without modifying it, or 0 for no values.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
