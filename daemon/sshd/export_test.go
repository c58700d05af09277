package sshd

// ExtFingerprint is the Permissions extension the public-key callback records.
const ExtFingerprint = extFingerprint

// SetAdmitted makes s call f once a session holds one of its MaxSessions slots, before the
// session joins the hub (the instant a check-then-join limit would race in). Call before Serve.
func SetAdmitted(s *Server, f func()) { s.admitted = f }
