package store

// ChangeOp is the change feed entry of a write, for tests that build a
// write by hand.
func (s *Store) ChangeOp(org, typ, id string, deleted bool, version int64) (Op, error) {
	return s.changeOp(org, typ, id, deleted, version)
}
