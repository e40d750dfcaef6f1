package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// Options configure linking and running.
type Options struct {
	// CompileKernel compiles a kernel of the executable (its encoded
	// TIR); vm/loader sets it to decode with ir/tirenc and compile with
	// vm/kernel, tests pass Go kernels. The vm package itself depends on
	// neither TIR nor the kernel compiler.
	CompileKernel func(k Kernel) (abi.Kernel, error)
	// LinkExternal rebuilds an external module of the executable into its
	// packed functions by symbol; vm/loader sets it to vm/extern's
	// registry of module kinds. An executable with external modules cannot
	// be linked without it.
	LinkExternal func(m ExternalModule) (map[string]BuiltinFunc, error)
	// NewAllocator makes the allocator of each machine (one per concurrent
	// call); the default is tensor.NewPooledAllocator.
	NewAllocator func() tensor.Allocator
	// MaxCallDepth bounds nested VM calls (default 10000).
	MaxCallDepth int
	// MaxSteps bounds the instructions one Run executes (0: no bound).
	MaxSteps int64
	// MaxAllocBytes bounds one vm.builtin.alloc_storage (default 16 GiB), so
	// that a corrupt size is an error rather than an out-of-memory crash.
	MaxAllocBytes int64
	// Stats turns on per-function and per-kernel timing (RunStats).
	Stats bool
	// Stdout receives relax.run.print output (default os.Stdout).
	Stdout io.Writer
}

// VM is a linked executable: builtins resolved, kernels compiled, constants
// materialized, instructions decoded into their execution form. It is
// immutable, so any number of goroutines may Run on it at once; each call
// gets its own Machine (registers, frames, allocator) from a pool.
type VM struct {
	exe      *Executable
	opts     Options
	code     []xinstr
	funcs    []linkedFunc
	consts   []Value
	kernels  []abi.Kernel
	byName   map[string]int
	maxArgs  int
	machines sync.Pool
}

type linkedFunc struct {
	kind    FuncKind
	name    string
	start   int
	numArgs int
	numRegs int
	builtin *Builtin
	kernel  int
}

// xop is the execution form of an instruction: TVM's Call is split by callee
// kind at link time, and the two register builtins become moves, so the
// loop never looks up a callee or gathers arguments for a copy.
type xop uint8

const (
	xCallBuiltin xop = iota
	xCallKernel
	xCallKernelDyn // vm.builtin.call_tir_dyn: trailing shape unpacked into scalars
	xCallFunc
	xInvokeClosure // vm.builtin.invoke_closure
	xMove          // vm.builtin.copy
	xClear         // vm.builtin.null_value (kills)
	xRet
	xGoto
	xIf
)

// operand is a register (reg >= 0) or a value fixed at link time (reg < 0).
type operand struct {
	reg int32
	val Value
}

type xinstr struct {
	op     xop
	dst    int32 // register, or -1 for %void
	target int32 // kernel or function index; the register of Ret and If
	off    int32 // jump offset
	fn     BuiltinFunc
	args   []operand
}

// New links an executable (validating it first) into a runnable VM.
func New(exe *Executable, opts Options) (*VM, error) {
	if !exe.validated { // Unmarshal and Builder.Finish validate already
		if err := exe.Validate(); err != nil {
			return nil, err
		}
	}
	if opts.MaxCallDepth <= 0 {
		opts.MaxCallDepth = 10000
	}
	if opts.MaxAllocBytes <= 0 {
		opts.MaxAllocBytes = 1 << 34
	}
	if opts.NewAllocator == nil {
		opts.NewAllocator = tensor.NewPooledAllocator
	}
	vm := &VM{exe: exe, opts: opts, byName: map[string]int{}}
	vm.consts = make([]Value, len(exe.Constants))
	for i := range exe.Constants {
		v, err := exe.Constants[i].value()
		if err != nil {
			return nil, fmt.Errorf("constant %d: %w", i, err)
		}
		if t, ok := v.Tensor(); ok {
			// Constants are never written (kernels refuse frozen outputs),
			// so kernels may keep values derived from them: packed
			// weights are packed once per load.
			t.Storage.Freeze()
		}
		vm.consts[i] = v
	}
	vm.kernels = make([]abi.Kernel, len(exe.Kernels))
	for i, k := range exe.Kernels {
		kf, err := vm.compileKernel(k)
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		vm.kernels[i] = kf
	}
	external, err := vm.linkExternal()
	if err != nil {
		return nil, err
	}
	vm.funcs = make([]linkedFunc, len(exe.Funcs))
	kidx := exe.kernelIndices()
	for i, f := range exe.Funcs {
		lf := linkedFunc{kind: f.Kind, name: f.Name, start: f.Start, numArgs: f.NumArgs, numRegs: f.NumRegs, kernel: -1}
		switch f.Kind {
		case FuncPacked:
			if b, ok := external[f.Name]; ok {
				lf.builtin = b
			} else {
				lf.builtin = LookupBuiltin(f.Name)
			}
		case FuncKernel:
			lf.kernel = kidx[f.Name]
			lf.numArgs = len(exe.Kernels[lf.kernel].Params)
		}
		vm.funcs[i] = lf
		vm.byName[f.Name] = i
	}
	vm.code = make([]xinstr, len(exe.Code))
	for i := range exe.Code {
		vm.code[i] = vm.link(&exe.Code[i])
		vm.maxArgs = max(vm.maxArgs, len(exe.Code[i].Args))
	}
	vm.machines.New = func() any { return vm.newMachine() }
	return vm, nil
}

// linkExternal rebuilds the external modules into builtins (any number of
// arguments: the module's functions check their own).
func (vm *VM) linkExternal() (map[string]*Builtin, error) {
	if len(vm.exe.External) == 0 {
		return nil, nil
	}
	if vm.opts.LinkExternal == nil {
		return nil, fmt.Errorf("the executable has %d external module(s) but no linker is configured (Options.LinkExternal; vm/loader sets it)", len(vm.exe.External))
	}
	out := map[string]*Builtin{}
	for i, x := range vm.exe.External {
		fns, err := vm.opts.LinkExternal(x)
		if err != nil {
			return nil, fmt.Errorf("external module %d (%s): %w", i, x.Kind, err)
		}
		for _, s := range x.Symbols {
			fn, ok := fns[s]
			if !ok || fn == nil {
				return nil, fmt.Errorf("external module %d (%s) does not define its symbol %q", i, x.Kind, s)
			}
			out[s] = &Builtin{Name: s, MinArgs: 0, MaxArgs: -1, Fn: fn}
		}
	}
	return out, nil
}

// Executable returns the executable the VM runs.
func (vm *VM) Executable() *Executable { return vm.exe }

func (vm *VM) compileKernel(k Kernel) (abi.Kernel, error) {
	if vm.opts.CompileKernel != nil {
		return vm.opts.CompileKernel(k)
	}
	return nil, errors.New("no kernel compiler configured (Options.CompileKernel)")
}

func (vm *VM) operand(a Arg) operand {
	switch a.Kind() {
	case ArgRegister:
		if a.Value() == RegVoid {
			return operand{reg: -1}
		}
		return operand{reg: int32(a.Value())}
	case ArgImmediate:
		return operand{reg: -1, val: Int(a.Value())}
	case ArgConstIdx:
		return operand{reg: -1, val: vm.consts[a.Value()]}
	default: // ArgFuncIdx
		return operand{reg: -1, val: closureValue(&Closure{Func: int(a.Value())})}
	}
}

func (vm *VM) link(in *Instr) xinstr {
	x := xinstr{dst: -1}
	switch in.Op {
	case OpRet:
		return xinstr{op: xRet, target: int32(in.Reg)}
	case OpGoto:
		return xinstr{op: xGoto, off: int32(in.Offset)}
	case OpIf:
		return xinstr{op: xIf, target: int32(in.Reg), off: int32(in.Offset)}
	}
	if in.Dst != RegVoid {
		x.dst = int32(in.Dst)
	}
	callee := &vm.funcs[in.Func]
	args := in.Args
	if callee.builtin != nil && callee.builtin.WithCtx {
		args = args[1:] // %vm: the builtin gets the Machine
	}
	x.args = make([]operand, len(args))
	for i, a := range args {
		x.args[i] = vm.operand(a)
	}
	x.target = int32(in.Func)
	switch callee.kind {
	case FuncVM:
		x.op = xCallFunc
	case FuncKernel:
		x.op = xCallKernel
		x.target = int32(callee.kernel)
	case FuncPacked:
		switch callee.name {
		case abi.BuiltinCopy:
			x.op = xMove
		case abi.BuiltinNullValue:
			x.op = xClear
		case abi.BuiltinInvokeClosure:
			x.op = xInvokeClosure
		case abi.BuiltinCallTIRDyn:
			x.op = xCallKernelDyn
			x.target = int32(vm.funcs[in.Args[0].Value()].kernel)
			x.args = x.args[1:]
		default:
			x.op = xCallBuiltin
			x.fn = callee.builtin.Fn
		}
	}
	return x
}

// RuntimeError is an error raised while running: it names the function, the
// instruction (index within the function and its disassembly) and the
// source position of the Relax binding the instruction came from.
type RuntimeError struct {
	Func  string
	Index int    // instruction index within the function
	Instr string // the instruction, disassembled
	Pos   Pos
	Err   error
}

func (e *RuntimeError) Error() string {
	pos := ""
	if e.Pos.IsValid() {
		pos = e.Pos.String() + ": "
	}
	return fmt.Sprintf("%sin %s, instruction %d (%s): %v", pos, e.Func, e.Index, e.Instr, e.Err)
}

func (e *RuntimeError) Unwrap() error { return e.Err }

// Run calls the function named name with Go arguments (see FromGo) and
// returns its result. Cancelling ctx stops the call between instructions.
func (vm *VM) Run(ctx context.Context, name string, args ...any) (Value, error) {
	vals := make([]Value, len(args))
	for i, a := range args {
		v, err := FromGo(a)
		if err != nil {
			return Value{}, fmt.Errorf("argument %d: %w", i, err)
		}
		vals[i] = v
	}
	v, _, err := vm.Call(ctx, name, vals)
	return v, err
}

// Call is Run with VM values, also returning the call's statistics (nil
// unless Options.Stats is set).
func (vm *VM) Call(ctx context.Context, name string, args []Value) (Value, *Stats, error) {
	fi, ok := vm.byName[name]
	if !ok || vm.funcs[fi].kind != FuncVM {
		return Value{}, nil, fmt.Errorf("the executable has no function %q", name)
	}
	f := &vm.funcs[fi]
	if len(args) != f.numArgs {
		return Value{}, nil, fmt.Errorf("%s takes %d arguments (%s), got %d", name, f.numArgs, paramList(vm.exe.Funcs[fi].ParamNames), len(args))
	}
	m := vm.machines.Get().(*Machine)
	defer vm.machines.Put(m)
	m.begin(ctx)
	v, err := m.invoke(fi, args)
	var st *Stats
	if vm.opts.Stats {
		st = m.collectStats()
	}
	m.end()
	return v, st, err
}

// Release gives the storage of a result the caller is done with back to
// the allocator of the call that made it, so that a loop of calls reuses
// its outputs' memory instead of allocating, clearing and faulting in
// fresh pages every time (TVM's pooled allocator gets an NDArray's memory
// back when its last reference drops; Go has no such moment, so the caller
// names it, as with sync.Pool). Every tensor and storage v reaches through
// tuples is released; storage no call allocated (arguments, constants,
// bound weights) is left alone. Afterwards neither v nor any tensor
// sharing its storage may be used: a later call writes over it. Release
// returns how many storages went back.
func (vm *VM) Release(v Value) int {
	released := 0
	work := []Value{v}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		var s *tensor.Storage
		switch x.kind {
		case KindTensor:
			t, _ := x.Tensor()
			s = t.Storage
		case KindStorage:
			s, _ = x.Storage()
		case KindTuple:
			t, _ := x.Tuple()
			work = append(work, t.Fields...)
		}
		if s != nil && s.Release() {
			released++
		}
	}
	return released
}

func paramList(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// Machine is the state of one call: the register stack, the frames, the
// argument scratch space and the allocator. Builtins receive it as the VM
// context (%vm).
type Machine struct {
	vm     *VM
	ctx    context.Context
	done   <-chan struct{}
	alloc  tensor.Allocator
	regs   []Value
	frames []frame
	argbuf []Value
	kargs  []abi.Arg
	steps  int64
	pc     int
	stats  *machineStats
	work   []Value           // scratch for Ret
	mark   []*tensor.Storage // scratch for Ret
	marked []*tensor.Tensor  // scratch for Ret

	// Per-instruction caches that make the steady state allocation-free:
	// shapes are immutable, so make_shape/shape_of reuse the last Shape of
	// their instruction when the dimensions repeat; tensor headers made by
	// alloc_tensor come back at Ret unless the result reaches them (an
	// escaped header is never reused, so a caller's tensor never changes).
	shapeCache  []*Shape
	tensorCache []*tensor.Tensor
	dimsBuf     []int64
}

type frame struct {
	fn       int
	base     int
	retPC    int
	retDst   int32
	storages []*tensor.Storage // allocated by this frame; freed at Ret unless returned
	owned    []ownedTensor     // tensor headers of alloc_tensor, recycled at Ret unless returned
	heap     *tensor.Tensor    // a recycled shape heap
	// heapInUse: this call took heap; a frame slot reuses its heap for
	// the next call at the same depth (the heap never escapes: VMShapeLower
	// keeps it in a register), unless the result reaches it.
	heapInUse bool
	start     time.Time
}

func (vm *VM) newMachine() *Machine {
	m := &Machine{vm: vm, alloc: vm.opts.NewAllocator(), argbuf: make([]Value, 0, vm.maxArgs)}
	if vm.opts.Stats {
		m.stats = newMachineStats(vm)
	}
	return m
}

func (m *Machine) begin(ctx context.Context) {
	m.ctx = ctx
	m.done = ctx.Done()
	m.steps = 0
	if m.stats != nil {
		m.stats.reset(m)
	}
}

func (m *Machine) end() {
	m.ctx, m.done = nil, nil
	clear(m.regs[:cap(m.regs)])
	m.regs = m.regs[:0]
	for i := range m.frames[:cap(m.frames)] {
		fr := &m.frames[:cap(m.frames)][i]
		clear(fr.storages)
		clear(fr.owned)
		fr.owned = fr.owned[:0]
	}
	m.frames = m.frames[:0]
	clear(m.argbuf[:cap(m.argbuf)])
	clear(m.kargs[:cap(m.kargs)])
}

// Allocator is the machine's allocator.
func (m *Machine) Allocator() tensor.Allocator { return m.alloc }

// Context is the call's context.
func (m *Machine) Context() context.Context { return m.ctx }

// invoke calls function fi and runs until it returns.
func (m *Machine) invoke(fi int, args []Value) (v Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = m.fail(m.pc, fmt.Errorf("internal error: panic: %v\n%s", r, debug.Stack()))
		}
	}()
	f := &m.vm.funcs[fi]
	switch f.kind {
	case FuncPacked:
		return f.builtin.Fn(m, args)
	case FuncKernel:
		return m.callKernel(f.kernel, args, nil)
	}
	depth := len(m.frames)
	if err := m.push(fi, args, -1, -1); err != nil {
		return Value{}, err
	}
	return m.loop(depth)
}

// push enters function fi with its arguments in registers 0..n-1.
func (m *Machine) push(fi int, args []Value, retPC int, retDst int32) error {
	if len(m.frames) >= m.vm.opts.MaxCallDepth {
		return fmt.Errorf("call depth exceeds %d (unbounded recursion?)", m.vm.opts.MaxCallDepth)
	}
	f := &m.vm.funcs[fi]
	if len(args) != f.numArgs {
		return fmt.Errorf("%s takes %d arguments, got %d", f.name, f.numArgs, len(args))
	}
	base := len(m.regs)
	need := base + f.numRegs
	if need > cap(m.regs) {
		grown := make([]Value, need, 2*need)
		copy(grown, m.regs)
		m.regs = grown
	} else {
		m.regs = m.regs[:need]
	}
	copy(m.regs[base:], args)
	n := len(m.frames)
	if n < cap(m.frames) {
		m.frames = m.frames[:n+1]
	} else {
		m.frames = append(m.frames, frame{})
	}
	fr := &m.frames[n]
	fr.fn, fr.base, fr.retPC, fr.retDst = fi, base, retPC, retDst
	fr.storages = fr.storages[:0]
	fr.owned = fr.owned[:0]
	fr.heapInUse = false
	if m.stats != nil {
		fr.start = time.Now()
		m.stats.funcs[fi].calls++
	}
	return nil
}

// fail wraps err with the location of instruction pc.
func (m *Machine) fail(pc int, err error) error {
	var re *RuntimeError
	if errors.As(err, &re) {
		return err // raised in a nested call: keep the innermost location
	}
	exe := m.vm.exe
	name, idx := "?", pc
	for i := range exe.Funcs {
		f := &exe.Funcs[i]
		if f.Kind == FuncVM && pc >= f.Start && pc < f.End {
			name, idx = f.Name, pc-f.Start
			break
		}
	}
	instr := "?"
	if pc >= 0 && pc < len(exe.Code) {
		instr = exe.InstrString(&exe.Code[pc])
	}
	return &RuntimeError{Func: name, Index: idx, Instr: instr, Pos: exe.PosOf(pc), Err: err}
}

// read returns an operand's value in the current frame.
func read(regs []Value, o *operand) Value {
	if o.reg >= 0 {
		return regs[o.reg]
	}
	return o.val
}

// gather collects a call's arguments into the scratch buffer, whose
// capacity covers the longest argument list of the executable (link time).
func (m *Machine) gather(regs []Value, ops []operand) []Value {
	buf := m.argbuf[:len(ops)]
	for i := range ops {
		o := &ops[i]
		if o.reg >= 0 {
			buf[i] = regs[o.reg]
		} else {
			buf[i] = o.val
		}
	}
	return buf
}

// loop runs the interpreter until the frame at depth returns.
func (m *Machine) loop(depth int) (Value, error) {
	code := m.vm.code
	fr := &m.frames[len(m.frames)-1]
	regs := m.regs[fr.base:len(m.regs)]
	pc := m.vm.funcs[fr.fn].start
	maxSteps := m.vm.opts.MaxSteps
	for {
		m.pc = pc
		m.steps++
		if m.steps&255 == 0 {
			if err := m.checkpoint(maxSteps); err != nil {
				return Value{}, m.fail(pc, err)
			}
		}
		if m.stats != nil {
			m.stats.funcs[fr.fn].instrs++
		}
		in := &code[pc]
		switch in.op {
		case xCallBuiltin:
			v, err := in.fn(m, m.gather(regs, in.args))
			if err != nil {
				return Value{}, m.fail(pc, err)
			}
			if in.dst >= 0 {
				regs[in.dst] = v
			}
			pc++
		case xMove:
			v := read(regs, &in.args[0])
			if in.dst >= 0 {
				regs[in.dst] = v
			}
			pc++
		case xClear:
			if in.dst >= 0 {
				regs[in.dst] = Value{}
			}
			pc++
		case xCallKernel, xCallKernelDyn:
			args := m.gather(regs, in.args)
			var dyn *Shape
			if in.op == xCallKernelDyn {
				if len(args) == 0 {
					return Value{}, m.fail(pc, errors.New("call_tir_dyn needs a trailing shape"))
				}
				s, ok := args[len(args)-1].Shape()
				if !ok {
					return Value{}, m.fail(pc, fmt.Errorf("call_tir_dyn: the last argument must be a shape, got %s", args[len(args)-1].kind))
				}
				dyn, args = s, args[:len(args)-1]
			}
			v, err := m.callKernel(int(in.target), args, dyn)
			if err != nil {
				return Value{}, m.fail(pc, err)
			}
			if in.dst >= 0 {
				regs[in.dst] = v
			}
			pc++
		case xCallFunc:
			if err := m.push(int(in.target), m.gather(regs, in.args), pc+1, in.dst); err != nil {
				return Value{}, m.fail(pc, err)
			}
			fr = &m.frames[len(m.frames)-1]
			regs = m.regs[fr.base:len(m.regs)]
			pc = m.vm.funcs[fr.fn].start
		case xInvokeClosure:
			args := m.gather(regs, in.args)
			if len(args) == 0 {
				return Value{}, m.fail(pc, errors.New("invoke_closure needs a closure"))
			}
			c, ok := args[0].closure()
			if !ok {
				return Value{}, m.fail(pc, fmt.Errorf("invoke_closure: expected a function, got %s", args[0].kind))
			}
			full := append(args[1:len(args):len(args)], c.Bound...)
			f := &m.vm.funcs[c.Func]
			if f.kind != FuncVM {
				v, err := m.invokeOther(c.Func, full)
				if err != nil {
					return Value{}, m.fail(pc, err)
				}
				if in.dst >= 0 {
					regs[in.dst] = v
				}
				pc++
				continue
			}
			if err := m.push(c.Func, full, pc+1, in.dst); err != nil {
				return Value{}, m.fail(pc, err)
			}
			fr = &m.frames[len(m.frames)-1]
			regs = m.regs[fr.base:len(m.regs)]
			pc = f.start
		case xRet:
			v := regs[in.target]
			retPC, retDst := fr.retPC, fr.retDst
			m.pop(v)
			if len(m.frames) == depth {
				return v, nil
			}
			fr = &m.frames[len(m.frames)-1]
			regs = m.regs[fr.base:len(m.regs)]
			if retDst >= 0 {
				regs[retDst] = v
			}
			pc = retPC
		case xGoto:
			pc += int(in.off)
		case xIf:
			c := regs[in.target]
			if c.kind != KindInt && c.kind != KindBool {
				return Value{}, m.fail(pc, fmt.Errorf("If condition is a %s, not a bool or int", c.kind))
			}
			if c.i != 0 {
				pc++
			} else {
				pc += int(in.off)
			}
		}
	}
}

// invokeOther calls a builtin or kernel entry of the function table.
func (m *Machine) invokeOther(fi int, args []Value) (Value, error) {
	f := &m.vm.funcs[fi]
	if f.kind == FuncKernel {
		return m.callKernel(f.kernel, args, nil)
	}
	if f.builtin.WithCtx {
		return Value{}, fmt.Errorf("cannot call %s through a closure", f.name)
	}
	if len(args) < f.builtin.MinArgs || (f.builtin.MaxArgs >= 0 && len(args) > f.builtin.MaxArgs) {
		return Value{}, fmt.Errorf("%s takes %s, got %d", f.name, f.builtin.arity(), len(args))
	}
	// The builtin gets its own copy: args may alias the scratch buffer.
	return f.builtin.Fn(m, append([]Value(nil), args...))
}

func (m *Machine) checkpoint(maxSteps int64) error {
	if maxSteps > 0 && m.steps > maxSteps {
		return fmt.Errorf("instruction budget of %d exhausted", maxSteps)
	}
	select {
	case <-m.done:
		return m.ctx.Err()
	default:
		return nil
	}
}

// pop leaves the current frame: storages it allocated go back to the
// allocator unless the result v refers to them, and its registers are
// cleared so that the garbage collector can reclaim what they held.
func (m *Machine) pop(v Value) {
	n := len(m.frames) - 1
	fr := &m.frames[n]
	if len(fr.storages) > 0 || len(fr.owned) > 0 || fr.heapInUse {
		m.release(fr, v)
	}
	if m.stats != nil {
		m.stats.funcs[fr.fn].time += time.Since(fr.start)
	}
	clear(m.regs[fr.base:])
	m.regs = m.regs[:fr.base]
	m.frames = m.frames[:n]
}

// release frees the frame's storages and recycles its tensor headers,
// except those the result v reaches. The walk is bounded; a value too
// large to walk keeps everything (the garbage collector then reclaims the
// storage instead of the pool).
func (m *Machine) release(fr *frame, v Value) {
	keep, kept := m.mark[:0], m.marked[:0]
	work := append(m.work[:0], v)
	defer func() {
		clear(work[:cap(work)])
		m.work = work[:0]
		clear(keep)
		m.mark = keep[:0]
		clear(kept)
		m.marked = kept[:0]
		clear(fr.storages)
		fr.storages = fr.storages[:0]
		clear(fr.owned)
		fr.owned = fr.owned[:0]
	}()
	const maxWalk = 4096
	for steps := 0; len(work) > 0; steps++ {
		if steps > maxWalk {
			fr.heap = nil
			return
		}
		x := work[len(work)-1]
		work = work[:len(work)-1]
		switch x.kind {
		case KindTensor:
			t, _ := x.Tensor()
			keep = append(keep, t.Storage)
			kept = append(kept, t)
		case KindStorage:
			s, _ := x.Storage()
			keep = append(keep, s)
		case KindTuple:
			t, _ := x.Tuple()
			work = append(work, t.Fields...)
		case KindFunc:
			c, _ := x.closure()
			work = append(work, c.Bound...)
		}
	}
	if fr.heapInUse && slices.Contains(kept, fr.heap) {
		fr.heap = nil // returned: the next call gets a new one
	}
	for _, s := range fr.storages {
		if !slices.Contains(keep, s) {
			m.alloc.Free(s)
		}
	}
	for _, o := range fr.owned {
		if !slices.Contains(kept, o.t) {
			m.tensorCache[o.pc] = o.t
		}
	}
}

// ownedTensor is a tensor header made by the alloc_tensor at pc.
type ownedTensor struct {
	pc int
	t  *tensor.Tensor
}

// newTensorHeader returns a header for the alloc_tensor being executed:
// the instruction's recycled one, or a fresh one.
func (m *Machine) newTensorHeader() *tensor.Tensor {
	if m.tensorCache == nil {
		m.tensorCache = make([]*tensor.Tensor, len(m.vm.code))
	}
	t := m.tensorCache[m.pc]
	if t == nil {
		return new(tensor.Tensor)
	}
	m.tensorCache[m.pc] = nil // in use until its frame returns
	return t
}

// own records that the current frame holds header t.
func (m *Machine) own(t *tensor.Tensor) {
	if len(m.frames) > 0 {
		fr := &m.frames[len(m.frames)-1]
		fr.owned = append(fr.owned, ownedTensor{pc: m.pc, t: t})
	}
}

// shapeValue returns a Shape holding dims (which the caller may reuse):
// the instruction's previous Shape when the dimensions are the same.
func (m *Machine) shapeValue(dims []int64) Value {
	if m.shapeCache == nil {
		m.shapeCache = make([]*Shape, len(m.vm.code))
	}
	if s := m.shapeCache[m.pc]; s != nil && slices.Equal(s.Dims, dims) {
		return Value{kind: KindShape, p: unsafe.Pointer(s)}
	}
	s := &Shape{Dims: slices.Clone(dims)}
	m.shapeCache[m.pc] = s
	return Value{kind: KindShape, p: unsafe.Pointer(s)}
}

// callKernel calls kernel ki with tensor and scalar arguments; dyn, if not
// nil, supplies trailing int64 scalars (call_tir_dyn). The result is null
// unless the kernel returns a scalar.
func (m *Machine) callKernel(ki int, args []Value, dyn *Shape) (Value, error) {
	ka := m.kargs[:0]
	for i, a := range args {
		switch a.kind {
		case KindTensor:
			t, _ := a.Tensor()
			ka = append(ka, abi.Arg{T: t})
		case KindInt, KindBool:
			ka = append(ka, abi.Arg{I: a.i, F: float64(a.i)})
		case KindFloat:
			f, _ := a.Float()
			ka = append(ka, abi.Arg{F: f})
		default:
			m.kargs = ka
			return Value{}, fmt.Errorf("kernel %s argument %d: a %s cannot be passed to a kernel", m.vm.exe.Kernels[ki].Name, i, a.kind)
		}
	}
	if dyn != nil {
		for _, d := range dyn.Dims {
			ka = append(ka, abi.Arg{I: d, F: float64(d)})
		}
	}
	m.kargs = ka
	rec := &m.vm.exe.Kernels[ki]
	if want := len(rec.Params); len(ka) != want {
		return Value{}, fmt.Errorf("kernel %s takes %d arguments, got %d", rec.Name, want, len(ka))
	}
	var start time.Time
	if m.stats != nil {
		start = time.Now()
	}
	var ret abi.Arg
	var err error
	if vk, ok := m.vm.kernels[ki].(abi.ValueKernel); ok && rec.Ret != "" {
		ret, err = vk.CallValue(ka)
	} else if rec.Ret != "" {
		err = fmt.Errorf("kernel %s returns %s but its implementation cannot return a value", rec.Name, rec.Ret)
	} else {
		err = m.vm.kernels[ki].Call(ka)
	}
	if m.stats != nil {
		ks := &m.stats.kernels[ki]
		ks.calls++
		ks.time += time.Since(start)
	}
	if err != nil {
		return Value{}, fmt.Errorf("kernel %s: %w", rec.Name, err)
	}
	switch rec.Ret {
	case "":
		return Value{}, nil
	case "float16", "bfloat16", "float32", "float64":
		return Float(ret.F), nil
	case "bool":
		return Bool(ret.I != 0), nil
	}
	return Int(ret.I), nil
}
