package research

// Token estimates for calls whose prompt the runner does not build.
const (
	estimatePlanTokens  = 1800
	analyzeOutputTokens = 3000
	// writeReserveMin and writeReserveMax bound the tokens kept back for
	// the report: a third of the budget, within these.
	writeReserveMin = 2000
	writeReserveMax = 40000
)

// budget tracks tokens against --max-tokens, keeping a reserve so the
// report can always be written from what was found.
type budget struct {
	max, used, reserve int
}

func newBudget(limit, used int) budget {
	b := budget{max: limit, used: used}
	if limit > 0 {
		b.reserve = min(max(limit/3, writeReserveMin), writeReserveMax)
	}
	return b
}

// allow reports whether a call estimated at n tokens fits before the
// reserve.
func (b budget) allow(n int) bool {
	return b.max == 0 || b.used+n <= b.max-b.reserve
}

// room is what the loop may still spend before the reserve (unbounded when
// there is no budget).
func (b budget) room() int {
	if b.max == 0 {
		return 1 << 30
	}
	return max(0, b.max-b.reserve-b.used)
}

// left is everything still unspent, reserve included.
func (b budget) left() int {
	if b.max == 0 {
		return 1 << 30
	}
	return max(0, b.max-b.used)
}
