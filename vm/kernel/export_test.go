package kernel

// FastTaken is the number of pattern fast-path runs so far.
func FastTaken() int64 { return fastTaken.Load() }
