package store

import "context"

// int64s runs a raw statement that returns one integer column (a seq, a
// count) and reads its rows itself: gorm's Scan renders the statement's
// SQL with its arguments on every call, even when nothing is logged, and
// these statements run several times per turn.
func (s *Store) int64s(ctx context.Context, query string, args ...any) ([]int64, error) {
	rows, err := s.q(ctx).Raw(query, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
