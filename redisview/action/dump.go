package action

import (
	"encoding/binary"
	"hash/crc64"
)

// Redis's CRC-64 (Jones polynomial, reflected, no final xor) in the
// reversed form hash/crc64 takes.
var redisCRC = crc64.MakeTable(0x95ac9329ac4bc9b5)

// checkDump verifies a DUMP payload's trailer (RDB version, CRC-64) before
// undo hands it to RESTORE. The server would refuse a damaged payload
// anyway, but only when EXEC runs, and inside MULTI a refused RESTORE does
// not roll back the other keys of a multi-key undo: checking first keeps
// undo all-or-nothing.
func checkDump(b []byte) bool {
	if len(b) < 10 {
		return false
	}
	body, sum := b[:len(b)-8], binary.LittleEndian.Uint64(b[len(b)-8:])
	return ^crc64.Update(^uint64(0), redisCRC, body) == sum
}

// dumpVersion is the RDB version a payload was written with; a server
// refuses payloads newer than its own.
func dumpVersion(b []byte) uint16 {
	if len(b) < 10 {
		return 0
	}
	return binary.LittleEndian.Uint16(b[len(b)-10:])
}
