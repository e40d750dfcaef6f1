package kernel

import "github.com/phasec/phasec/tensor"

// float16 and bfloat16 are storage formats: values are computed in float32
// and rounded to nearest even when stored (tensor's conversions).

func f16ToF32(h uint16) float32  { return tensor.F16(h).Float32() }
func f32ToF16(f float32) uint16  { return uint16(tensor.F16FromFloat32(f)) }
func bf16ToF32(h uint16) float32 { return tensor.BF16(h).Float32() }
func f32ToBF16(f float32) uint16 { return uint16(tensor.BF16FromFloat32(f)) }
