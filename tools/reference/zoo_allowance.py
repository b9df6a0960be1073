"""What a float32 training step may differ from float64 by, beyond noise.

make_zoo.py compares dpc's step with PyTorch's float64 step. Two effects
are not bounded by "as close to float64 as PyTorch's float32 step is", and
each gets an allowance computed here, per parameter element, in float64:

Kinks. An activation with a kink (ReLU, leaky ReLU, PReLU at 0, ReLU6 at 0
and 6, hard swish and hard sigmoid at -3 and 3) has a derivative that
jumps there. A unit
whose exact input lies within float32's forward error of a kink may land on
either side in a float32 run, and the side decides whether its output
gradient passes, which moves the gradients below it by far more than
rounding (one unit of one sample can carry a batch-norm shift's gradient:
PyTorch's own float32 step changes side with the thread count). Such a
unit is ambiguous: |x64 - kink| <= KINK_MARGIN * e, e the largest
|x32 - x64| of PyTorch's float32 forward over the same activation call
(that call's forward error; KINK_MARGIN = 2 as dpc may be twice as far from
float64 as PyTorch). Its allowance is what taking the other side does, to
first order: the change of its input's gradient (the derivative on the
other side minus this side's, times its output's gradient), carried back
to the parameters below it (a vector-Jacobian product of the float64 step
from that unit alone), in absolute value, summed over the ambiguous units.
So a float32 step may take either side at ambiguous units, and nothing
more: a unit farther from its kink, or a parameter no ambiguous unit
reaches, gets no allowance.

Cancellation. A gradient that is a sum of terms cancelling to (near) zero,
like a batch-norm shift followed by a linear layer and another batch norm,
which is exactly zero in exact arithmetic, is rounding noise in float32,
and PyTorch's noise in one run is no bound for another summation order's.
The bound that holds for any order is the terms' magnitudes: a float32 sum
of terms t_k is within n u sum |t_k| of the exact one (u = 2^-24), and
blocked or pairwise sums within a small multiple of u sum |t_k|. The floor
is ROUNDING_UNITS * u * sum_k |t_k|, with the terms those of the
parameter's own layer (conv, linear, batch and layer norm: dW = sum over
samples and positions of dY x, db = sum dY), in float64. It is far below
the relative tolerance wherever the terms do not cancel.
"""

import copy

import torch
from torch import nn
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

KINK_MARGIN = 2  # forward errors: how far from a kink a unit is ambiguous
ROUNDING_UNITS = 16  # the cancellation floor, in units of u * sum |terms|
FLOAT32_UNIT = 2.0 ** -24


def _kinks(func, args, kwargs):
    """The kinks of an activation call and its pure (out-of-place) form, or
    None for anything else."""
    if func in (F.relu, torch.relu, torch.relu_, torch.Tensor.relu,
                torch.Tensor.relu_):
        return (0.0,), torch.relu
    if func is F.leaky_relu:
        slope = args[1] if len(args) > 1 else kwargs.get("negative_slope",
                                                         0.01)
        return (0.0,), lambda t: F.leaky_relu(t, slope)
    if func is F.prelu:
        weight = args[1] if len(args) > 1 else kwargs["weight"]
        return (0.0,), lambda t: F.prelu(t, weight)
    if func is F.relu6:
        return (0.0, 6.0), F.relu6
    if func is F.hardtanh:
        lo = args[1] if len(args) > 1 else kwargs.get("min_val", -1.0)
        hi = args[2] if len(args) > 2 else kwargs.get("max_val", 1.0)
        return (float(lo), float(hi)), lambda t: F.hardtanh(t, lo, hi)
    if func is F.hardswish:
        return (-3.0, 3.0), F.hardswish
    if func is F.hardsigmoid:
        return (-3.0, 3.0), F.hardsigmoid
    return None


def _derivative(fn, x):
    """fn' at every element of x (fn acts elementwise)."""
    with torch.enable_grad():
        t = x.detach().requires_grad_()
        (d,) = torch.autograd.grad(fn(t).sum(), t)
    return d


class Kinks(TorchFunctionMode):
    """Runs every activation call with a kink out of place and records, in
    call order, its input (`inputs` detached, `nodes` in the graph), kinks
    and pure form, and (`record_grads`) the gradient of its output."""

    def __init__(self, record_grads=False):
        super().__init__()
        self.inputs, self.nodes, self.kinks, self.fns = [], [], [], []
        self.grads, self.record_grads = {}, record_grads

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        found = _kinks(func, args, kwargs)
        if found is None:
            return func(*args, **kwargs)
        call = len(self.inputs)
        x = args[0]
        self.inputs.append(x.detach().clone())
        self.nodes.append(x)
        self.kinks.append(found[0])
        self.fns.append(found[1])
        y = found[1](x)
        if self.record_grads and y.requires_grad:
            y.register_hook(lambda g, call=call: self._record(call, g))
        return y

    def _record(self, call, grad):
        if self.record_grads:  # the step's backward, not a later one
            self.grads[call] = grad.detach().clone()


def ambiguous_units(kinks32, kinks64):
    """(call, flat index, change of the input gradient) of every unit
    within KINK_MARGIN forward errors of a kink."""
    units = []
    for call, (x32, x64) in enumerate(zip(kinks32.inputs, kinks64.inputs)):
        error = (x32.double() - x64).abs().max().item()
        if error == 0 or call not in kinks64.grads:
            continue
        flat = x64.reshape(-1)
        nearest = torch.stack([flat - k for k in kinks64.kinks[call]])
        which = nearest.abs().argmin(0)
        distance = nearest.abs().gather(0, which[None])[0]
        indices = torch.nonzero(distance <= KINK_MARGIN * error).flatten()
        if not indices.numel():
            continue
        kinks = torch.tensor(kinks64.kinks[call], dtype=flat.dtype)[
            which[indices]]
        fn = kinks64.fns[call]
        values = flat[indices]
        change = (_derivative(fn, 2 * kinks - values) -
                  _derivative(fn, values)) * \
            kinks64.grads[call].reshape(-1)[indices]
        units += [(call, int(i), c.item()) for i, c in zip(indices, change)]
    return units


class _Terms:
    """Per parameter, sum |terms| of its gradient in its own layer."""

    def __init__(self, model):
        self.sums, self.handles, self.active = {}, [], True
        for name, module in model.named_modules():
            if isinstance(module, (nn.Conv2d, nn.Linear, nn.BatchNorm2d,
                                   nn.LayerNorm)):
                self.handles.append(module.register_forward_hook(
                    self._hook(name + "." if name else "")))

    def _hook(self, prefix):
        def forward(module, inputs, output):
            x = inputs[0].detach()

            def backward(dy):
                if self.active:  # the step's backward, not a later one
                    self._add(prefix, module, x, dy.detach().abs())
            if output.requires_grad:
                output.register_hook(backward)
        return forward

    def _add(self, prefix, module, x, dy):
        def put(name, value):
            key = prefix + name
            self.sums[key] = self.sums.get(key, 0) + value
        if isinstance(module, nn.Conv2d):
            put("weight", torch.nn.grad.conv2d_weight(
                x.abs(), module.weight.shape, dy, module.stride,
                module.padding, module.dilation, module.groups))
            if module.bias is not None:
                put("bias", dy.sum((0, 2, 3)))
            return
        if isinstance(module, nn.Linear):
            put("weight", dy.reshape(-1, dy.shape[-1]).T @
                x.abs().reshape(-1, x.shape[-1]))
            if module.bias is not None:
                put("bias", dy.reshape(-1, dy.shape[-1]).sum(0))
            return
        if isinstance(module, nn.BatchNorm2d):
            mean = x.mean((0, 2, 3), keepdim=True)
            var = x.var((0, 2, 3), unbiased=False, keepdim=True)
            normalized = (x - mean) / torch.sqrt(var + module.eps)
            dims = (0, 2, 3)
        else:  # LayerNorm over its trailing dims
            shape = tuple(module.normalized_shape)
            if x.dim() == 4 and tuple(x.shape[-len(shape):]) != shape:
                # torchvision's LayerNorm2d: over the channels of NCHW.
                x, dy = x.permute(0, 2, 3, 1), dy.permute(0, 2, 3, 1)
            axes = tuple(range(x.dim() - len(shape), x.dim()))
            mean = x.mean(axes, keepdim=True)
            var = x.var(axes, unbiased=False, keepdim=True)
            normalized = (x - mean) / torch.sqrt(var + module.eps)
            dims = tuple(range(x.dim() - len(axes)))
        if module.weight is not None:
            put("weight", (dy * normalized.abs()).sum(dims))
        if module.bias is not None:
            put("bias", dy.sum(dims))


def allowance(model, x, y, loss_fn=F.cross_entropy):
    """Per parameter, the float64 allowance tensor (kinks + cancellation),
    and a line saying what it holds."""
    kinks32, kinks64 = Kinks(), Kinks(record_grads=True)
    with torch.no_grad(), kinks32:
        copy.deepcopy(model)(x)
    model = copy.deepcopy(model).double()
    if x.is_floating_point():
        x = x.double()
    terms = _Terms(model)
    with kinks64:
        loss = loss_fn(model(x), y)
    params = dict(model.named_parameters())
    loss.backward(retain_graph=True)
    kinks64.record_grads = terms.active = False
    units = ambiguous_units(kinks32, kinks64)
    flips = {n: torch.zeros_like(p) for n, p in params.items()}
    for call, index, change in units:
        node = kinks64.nodes[call]
        cotangent = torch.zeros_like(node)
        cotangent.view(-1)[index] = change
        grads = torch.autograd.grad(node, list(params.values()), cotangent,
                                    retain_graph=True, allow_unused=True)
        for n, g in zip(params, grads):
            if g is not None:
                flips[n] += g.abs()
    result = {}
    for n, p in params.items():
        floor = terms.sums.get(n)
        floor = torch.zeros_like(p) if floor is None else \
            ROUNDING_UNITS * FLOAT32_UNIT * floor.reshape(p.shape)
        result[n] = (flips[n] + floor).detach()
    reached = sum(1 for f in flips.values() if f.abs().max() > 0)
    note = (f"{len(units)} units within {KINK_MARGIN} forward errors of a "
            f"kink (reaching {reached} parameters); {len(terms.sums)} "
            f"parameters with a cancellation floor")
    return result, note
