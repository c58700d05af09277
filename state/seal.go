package state

import "github.com/rangekeeper/rangekeeper/internal/redact"

// seal is the one redaction layer every record passes before it is written to bbolt (journal
// entries, snapshot records, write-ahead records, probe history, drafts): credential-like values
// become "[redacted]" while their names stay. Backends keep values out of their records by
// construction (the Docker snapshot keeps variable names and salted hashes); this pass is the
// net under every writer.
func seal(raw []byte) []byte { return redact.Bytes(raw) }
