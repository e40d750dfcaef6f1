// Package abi is the contract between phasec's compiler and its VM: the
// names of the runtime functions the compiler emits and the VM registers,
// the integer codes their arguments carry, and the kernel ABI (how a
// compiled TIR kernel is called and the signature an executable records
// for it). Both sides import it, so a name or a code is written once.
//
// The package is a leaf: it imports nothing of phasec but tensor (a kernel
// argument holds a *tensor.Tensor), and holds no behaviour beyond
// comparing signatures. The values are TVM's (src/runtime/relax_vm/
// builtin.cc, include/tvm/runtime/relax_vm/builtin.h), so executables
// read the same as TVM's as_text output.
package abi

// Builtins the compiler emits and the VM registers (R.call_packed and
// R.call_builtin_with_ctx targets, and what code generation emits itself).
const (
	// Registers and control flow (code generation).
	BuiltinCopy           = "vm.builtin.copy"
	BuiltinNullValue      = "vm.builtin.null_value"
	BuiltinReadIfCond     = "vm.builtin.read_if_cond"
	BuiltinMakeTuple      = "vm.builtin.make_tuple"
	BuiltinTupleGetItem   = "vm.builtin.tuple_getitem"
	BuiltinTupleResetItem = "vm.builtin.tuple_reset_item"
	BuiltinMakeClosure    = "vm.builtin.make_closure"
	BuiltinInvokeClosure  = "vm.builtin.invoke_closure" // takes the VM context
	BuiltinCallTIRDyn     = "vm.builtin.call_tir_dyn"   // kernel, args..., trailing shape

	// Memory (R.vm.alloc_storage, R.vm.alloc_tensor).
	BuiltinAllocStorage     = "vm.builtin.alloc_storage" // takes the VM context
	BuiltinAllocTensor      = "vm.builtin.alloc_tensor"
	BuiltinEnsureZeroOffset = "vm.builtin.ensure_zero_offset"
	BuiltinToDevice         = "vm.builtin.to_device"

	// Shapes and views (LowerRuntimeBuiltin).
	BuiltinShapeOf       = "vm.builtin.shape_of"
	BuiltinReshape       = "vm.builtin.reshape"
	BuiltinTensorToShape = "vm.builtin.tensor_to_shape"
	BuiltinCreateView    = "runtime.TVMArrayCreateView"

	// VMShapeLower's shape heap and checks.
	BuiltinAllocShapeHeap     = "vm.builtin.alloc_shape_heap" // takes the VM context
	BuiltinMatchShape         = "vm.builtin.match_shape"
	BuiltinMatchPrimValue     = "vm.builtin.match_prim_value"
	BuiltinMakeShape          = "vm.builtin.make_shape"
	BuiltinMakePrimValue      = "vm.builtin.make_prim_value"
	BuiltinCheckTensorInfo    = "vm.builtin.check_tensor_info"
	BuiltinCheckShapeInfo     = "vm.builtin.check_shape_info"
	BuiltinCheckPrimValueInfo = "vm.builtin.check_prim_value_info"
	BuiltinCheckTupleInfo     = "vm.builtin.check_tuple_info"
	BuiltinCheckFuncInfo      = "vm.builtin.check_func_info"
	BuiltinAssert             = "vm.builtin.assert"

	// Debugging (R.print, R.assert_op).
	BuiltinPrint    = "relax.run.print"
	BuiltinAssertOp = "relax.run.assert_op"
)

// MatchCode is how vm.builtin.match_shape and match_prim_value treat one
// value (TVM's relax_vm::MatchShapeCode); it travels as an integer
// immediate before its operand.
type MatchCode int64

const (
	MatchAssertEqualToImm  MatchCode = 0 // the value == the operand
	MatchStoreToHeap       MatchCode = 1 // heap[operand] = the value
	MatchNoOp              MatchCode = 2 // not checked in this round
	MatchAssertEqualToLoad MatchCode = 3 // the value == heap[operand]
)

// MakeCode is how vm.builtin.make_shape and make_prim_value compute one
// value (TVM's relax_vm::MakeShapeCode).
type MakeCode int64

const (
	MakeUseImm    MakeCode = 0 // the operand
	MakeLoadShape MakeCode = 1 // heap[operand]
)
