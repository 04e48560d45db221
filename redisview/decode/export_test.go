package decode

// SetBitcountChunk makes the bloom count cross chunk boundaries in tests;
// it returns the previous size.
func SetBitcountChunk(n int64) int64 { old := bitcountChunk; bitcountChunk = n; return old }
