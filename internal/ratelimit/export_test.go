package ratelimit

// SetMinPrune sets the fewest slots l keeps before it prunes (tests).
func SetMinPrune(l *Limiter, n int) { l.minPrune = n }

// Slots is how many counting slots l holds (tests).
func (l *Limiter) Slots() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.slots)
}

// Reserving reports whether id's slot in scope has a reservation in flight.
func (l *Limiter) Reserving(scope, id string) bool {
	l.mu.Lock()
	s := l.slots[scope+"#"+id]
	l.mu.Unlock()
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refill != nil
}
