package checkpoint

// DType is a safetensors element type, spelled as in the file header ("F32").
type DType string

// The element types the safetensors format defines. Load recognises all of
// them (so it can validate byte lengths), but only F32 and F64 can be read
// as floats; asking for another type gives ErrDType.
const (
	BOOL   DType = "BOOL"
	U8     DType = "U8"
	I8     DType = "I8"
	I16    DType = "I16"
	U16    DType = "U16"
	I32    DType = "I32"
	U32    DType = "U32"
	I64    DType = "I64"
	U64    DType = "U64"
	F4     DType = "F4"      // 4-bit float, two per byte
	F6E2M3 DType = "F6_E2M3" // 6-bit float, packed
	F6E3M2 DType = "F6_E3M2" // 6-bit float, packed
	F8E5M2 DType = "F8_E5M2"
	F8E4M3 DType = "F8_E4M3"
	F8E8M0 DType = "F8_E8M0"
	F16    DType = "F16"
	BF16   DType = "BF16"
	F32    DType = "F32"
	F64    DType = "F64"
	C64    DType = "C64" // complex64: two float32
)

// dtypeBits is the size of one element in bits.
var dtypeBits = map[DType]int{
	BOOL: 8, U8: 8, I8: 8,
	I16: 16, U16: 16,
	I32: 32, U32: 32,
	I64: 64, U64: 64,
	F4: 4, F6E2M3: 6, F6E3M2: 6,
	F8E5M2: 8, F8E4M3: 8, F8E8M0: 8,
	F16: 16, BF16: 16,
	F32: 32, F64: 64, C64: 64,
}

// Bits returns the size of one element in bits, or 0 for an unknown type.
func (d DType) Bits() int { return dtypeBits[d] }

// Known reports whether d is a safetensors element type.
func (d DType) Known() bool { return dtypeBits[d] != 0 }
