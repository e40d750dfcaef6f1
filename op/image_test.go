package op

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func TestInferResize2D(t *testing.T) {
	x := tensorVar("x", ir.Float32, symN, 3, 4, 5)
	s := shapeLit(8, 6)
	runInferCases(t, nil, []inferCase{
		{"resize2d", opCall(Resize2D, nil, x, s), tinfo(ir.Float32, symN, 3, 8, 6), ""},
		{"resize2d NHWC out_dtype", opCall(Resize2D, ir.Attrs{"layout": "NHWC", "out_dtype": ir.Int32}, x, s), tinfo(ir.Int32, symN, 8, 6, 5), ""},
		{"resize2d one extent", opCall(Resize2D, nil, x, primLit(7)), tinfo(ir.Float32, symN, 3, 7, 7), ""},
		{"resize2d one-tuple", opCall(Resize2D, nil, x, shapeLit(2)), tinfo(ir.Float32, symN, 3, 2, 2), ""},
		{"resize2d unknown size", opCall(Resize2D, nil, x, ir.NewVar("s", ir.ShapeInfoNDim(2))), ir.TensorInfoNDim(ir.Float32, 4), ""},
		{"resize2d size rank", opCall(Resize2D, nil, x, shapeLit(8, 8, 8)), nil, "R.image.resize2d: size must be a 2-D shape (height, width), got 3 dimensions"},
		{"resize2d size kind", opCall(Resize2D, nil, x, x), nil, "R.image.resize2d: size must be a shape"},
		{"resize2d rank", opCall(Resize2D, nil, tensorVar("y", ir.Float32, 4, 5), s), nil, "data must be a 4-D tensor, got rank 2"},
		{"resize2d layout", opCall(Resize2D, ir.Attrs{"layout": "NCHW4c"}, x, s), nil, `layout "NCHW4c" is not supported (NCHW or NHWC)`},
		{"resize2d method", opCall(Resize2D, ir.Attrs{"method": "bilinear"}, x, s), nil, `method "bilinear" is not one of ["nearest_neighbor" "linear" "cubic"]`},
		{"resize2d mode", opCall(Resize2D, ir.Attrs{"coordinate_transformation_mode": "centered"}, x, s), nil, `coordinate_transformation_mode "centered" is not one of`},
		{"resize2d rounding", opCall(Resize2D, ir.Attrs{"rounding_method": "nearest"}, x, s), nil, `rounding_method "nearest" is not one of`},
		{"resize2d roi", opCall(Resize2D, ir.Attrs{"roi": []any{0.0, 1.0}}, x, s), nil, "roi must be 4 numbers (start_h, start_w, end_h, end_w)"},
		{"resize2d align_corners to 1", opCall(Resize2D, ir.Attrs{"coordinate_transformation_mode": "align_corners"}, x, shapeLit(1, 6)), nil,
			`"align_corners" divides by the output extent minus 1, so size must not be 1`},
		{"resize2d negative", opCall(Resize2D, nil, x, shapeLit(-2, 6)), nil, "size -2 is negative"},
	})
}
