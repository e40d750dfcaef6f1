package ir

// STUB owned by the op-registry helper: the exported Op variables below are
// the contract other packages use; the helper adds schemas, inference,
// purity, normalize/validate hooks, and the full list of ops.

var (
	OpCallTIR            = RegisterOp(&Op{Name: "relax.call_tir", Pure: true, Category: CatCall})
	OpCallTIRInplace     = RegisterOp(&Op{Name: "relax.call_tir_inplace", Pure: true, Category: CatCall})
	OpCallDPSPacked      = RegisterOp(&Op{Name: "relax.call_dps_packed", Pure: true, Category: CatCall})
	OpCallPacked         = RegisterOp(&Op{Name: "relax.call_packed", Category: CatPacked})
	OpCallPurePacked     = RegisterOp(&Op{Name: "relax.call_pure_packed", Pure: true, Category: CatPacked})
	OpCallBuiltinWithCtx = RegisterOp(&Op{Name: "relax.call_builtin_with_ctx", Category: CatPacked})
	OpMakeClosure        = RegisterOp(&Op{Name: "relax.make_closure", Pure: true, Category: CatClosure})
	OpInvokeClosure      = RegisterOp(&Op{Name: "relax.invoke_closure", Category: CatClosure})
	OpInvokePureClosure  = RegisterOp(&Op{Name: "relax.invoke_pure_closure", Pure: true, Category: CatClosure})
	OpNullValue          = RegisterOp(&Op{Name: "relax.null_value", Pure: true, Category: CatMisc})
	OpShapeOf            = RegisterOp(&Op{Name: "relax.shape_of", Pure: true, Category: CatShape})
	OpBuiltinAllocTensor = RegisterOp(&Op{Name: "relax.builtin.alloc_tensor", Pure: true, Category: CatBuiltin})
	OpMemAllocStorage    = RegisterOp(&Op{Name: "relax.memory.alloc_storage", Pure: true, Category: CatMemory})
	OpMemAllocTensor     = RegisterOp(&Op{Name: "relax.memory.alloc_tensor", Pure: true, Category: CatMemory})
	OpMemKillStorage     = RegisterOp(&Op{Name: "relax.memory.kill_storage", Category: CatMemory})
	OpMemKillTensor      = RegisterOp(&Op{Name: "relax.memory.kill_tensor", Category: CatMemory})
	OpVMAllocStorage     = RegisterOp(&Op{Name: "relax.vm.alloc_storage", Pure: true, Category: CatVM})
	OpVMAllocTensor      = RegisterOp(&Op{Name: "relax.vm.alloc_tensor", Pure: true, Category: CatVM})
	OpVMKillObject       = RegisterOp(&Op{Name: "relax.vm.kill_object", Category: CatVM})
	OpVMCallTIRDyn       = RegisterOp(&Op{Name: "relax.vm.call_tir_dyn", Category: CatVM})
)
