package ratelimit

// SetMinPrune sets the fewest slots l keeps before it prunes (tests).
func SetMinPrune(l *Limiter, n int) { l.minPrune = n }

// Slots is how many counting slots l holds (tests).
func (l *Limiter) Slots() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.slots)
}
