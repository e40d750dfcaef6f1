package onnx

import (
	"archive/zip"
	"fmt"
	"io"
	"os"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
)

// Param is a weight: main's parameter name and its value.
type Param struct {
	Name string
	Data *ir.NDArray
}

// WriteParams writes the weights as an .npz archive (np.savez's format,
// uncompressed), one NAME.npy per parameter, straight from the arrays'
// bytes: no copy of the weights is made.
func WriteParams(w io.Writer, params []Param) error {
	zw := zip.NewWriter(w)
	for _, p := range params {
		dt, err := op.TensorDType(p.Data.DType)
		if err != nil {
			return fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		ew, err := zw.CreateHeader(&zip.FileHeader{Name: p.Name + ".npy", Method: zip.Store})
		if err != nil {
			return err
		}
		if _, err := ew.Write(tensor.NpyHeaderBytes(dt, p.Data.Shape)); err != nil {
			return err
		}
		if _, err := ew.Write(p.Data.Data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// WriteParamsFile writes the weights to path (see WriteParams).
func WriteParamsFile(path string, params []Param) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteParams(f, params); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
