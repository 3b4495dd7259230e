package torchfile

import (
	"encoding/binary"
	"fmt"
)

// scanPickle walks the opcodes of one pickle at the start of b without
// building anything, and returns its length (up to and including STOP). It
// is the guard in front of gopickle, which allocates whatever a length
// prefix declares: every length (FRAME, BINUNICODE8, BINBYTES8, LONG4, …)
// must fit in the bytes that follow it, so no declared size exceeds the
// file. Unknown opcodes and a pickle without STOP are errors.
func scanPickle(b []byte) (int, error) {
	pos := 0
	need := func(n uint64, op byte) error {
		if n > uint64(len(b)-pos) {
			return fmt.Errorf("%w: pickle opcode 0x%02x at byte %d declares %d bytes, but only %d follow", ErrFormat, op, pos, n, len(b)-pos)
		}
		return nil
	}
	for pos < len(b) {
		op := b[pos]
		pos++
		var fixed int
		var lenBytes int
		line := 0
		switch op {
		case '.': // STOP
			return pos, nil
		case '(', '0', '1', '2', 'N', 'Q', 'R', 'a', 'b', 'd', '}', 'e', 'l', ']', 'o', 's', 't', ')', 'u',
			0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x97, 0x98:
		case 'F', 'I', 'L', 'P', 'S', 'V', 'g', 'p': // one newline-terminated argument
			line = 1
		case 'c', 'i': // two
			line = 2
		case 'J', 'j', 'r', 0x84:
			fixed = 4
		case 'K', 'h', 'q', 0x80, 0x82:
			fixed = 1
		case 'M', 0x83:
			fixed = 2
		case 'G':
			fixed = 8
		case 'U', 'C', 0x8c, 0x8a: // one-byte length
			lenBytes = 1
		case 'T', 'X', 'B', 0x8b: // four-byte length
			lenBytes = 4
		case 0x8d, 0x8e, 0x96, 0x95: // eight-byte length (FRAME's is the frame, whose opcodes follow inline)
			lenBytes = 8
		default:
			return 0, fmt.Errorf("%w: unknown pickle opcode 0x%02x at byte %d", ErrFormat, op, pos-1)
		}
		for range line {
			for pos < len(b) && b[pos] != '\n' {
				pos++
			}
			if pos == len(b) {
				return 0, fmt.Errorf("%w: pickle ends inside a text argument", ErrFormat)
			}
			pos++
		}
		if fixed > 0 {
			if err := need(uint64(fixed), op); err != nil {
				return 0, err
			}
			pos += fixed
		}
		if lenBytes > 0 {
			if err := need(uint64(lenBytes), op); err != nil {
				return 0, err
			}
			var n uint64
			switch lenBytes {
			case 1:
				n = uint64(b[pos])
			case 4:
				n = uint64(binary.LittleEndian.Uint32(b[pos:]))
			case 8:
				n = binary.LittleEndian.Uint64(b[pos:])
			}
			pos += lenBytes
			if err := need(n, op); err != nil {
				return 0, err
			}
			if op != 0x95 { // a frame's contents are opcodes, scanned next
				pos += int(n)
			}
		}
	}
	return 0, fmt.Errorf("%w: the pickle has no STOP opcode", ErrFormat)
}
