package vm

import (
	"encoding/binary"
	"hash/crc32"
)

func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func crc32c(p []byte) uint32              { return crc32.Checksum(p, castagnoli) }
