package qa

import (
	"github.com/quarryhq/quarry/internal/followup"
	"github.com/quarryhq/quarry/session"
)

// resolve reads a follow-up against the session's earlier questions
// (followup.Resolve).
func resolve(q string, sess *session.Session) string {
	if sess == nil {
		return q
	}
	var earlier []string
	for _, m := range sess.Messages {
		if m.Role == session.RoleUser {
			earlier = append(earlier, m.Content)
		}
	}
	return followup.Resolve(q, earlier)
}
