#!/usr/bin/env python3
"""The model zoo: one training step of 16 real models, against PyTorch.

For each model (torchvision's resnet18, resnet50, mobilenet_v2,
mobilenet_v3_small, efficientnet_b0, vgg11_bn, densenet121, squeezenet1_1,
shufflenet_v2_x0_5, regnet_y_400mf, convnext_tiny, vit_b_16, and four small
ones: a TransformerEncoder text classifier, an LSTM classifier, an MLP with
LayerNorm + GELU + Dropout and a CNN with MaxPool + Dropout; beyond them, a
2-layer bidirectional LSTM, Hugging Face's BERT and GPT-2 and a
GPT-2-like causal language model, and Transformers' DistilBERT, ALBERT,
ELECTRA, RoBERTa, Llama, Mistral, Qwen2, ViT and Swin at tiny configs,
zoo_hf.py) at a small input size, in training mode with every dropout at
p = 0, writes ZOO/MODEL/:

  dynamo.onnx   torch.onnx.export's default exporter (IR 10, opset 18+)
  legacy.onnx   dynamo=False, opset 17, do_constant_folding=False
                (both through tools/models/export_torch2.py's export: the
                parameters' and persistent buffers' data are stripped,
                pointing at stripped.bin, which a test makes as a sparse
                file of zeros; the dynamo file keeps torch.export's graph
                signature metadata, which tells dpc the buffers from the
                parameters)
  images.npy    the batch (float images or int64 tokens), labels.npy
  loss.npy      PyTorch's float64 loss of one step
  reference/NAME.npy  per parameter, float32 [K + 3, 5], of PyTorch's
                float64 step (model.double()): column 1 for the gradient
                and column 2 for the parameter after one SGD step at lr
                0.1, columns 3 and 4 their allowances; row 0 the element
                count, their L2 norms and the allowances' L2 norms; rows 1
                and 2 the L2 norm and the largest element of PyTorch's
                float32 result's distance from the float64 one (its rounding
                noise, which bounds how far dpc may be where it exceeds the
                tolerance), row 2 also the largest allowances; rows 3.. a
                flat index (K = 64 seeded positions), the values there and
                their allowances (the form dpc-check-reference reads).

The allowances (zoo_allowance.py says why and how) are what a float32 step
may differ from float64 by that PyTorch's own float32 step need not show:
the gradients that change when a unit whose input is within float32's
forward error of a ReLU-like kink takes the other side, and a floor of
rounding for gradients whose terms cancel (a batch-norm shift whose exact
gradient is zero). A real error is not within them: zoo.test's header
records that breaking a kernel slightly (a convolution's padding, a
gradient's scale) fails it, and zoo_explain.py fits dpc's distance from
float64 by the ambiguous units (on RegNet and MobileNetV2, a few units
taken the other way explain it up to rounding). With --check, a model
where dpc is much further from float64 than PyTorch's float32 step (the
printed distances) is one to explain that way.

The weights are not stored: every parameter is hash:SEED's function of its
name and element index (hash_init below, runtime/train/Init.cpp in C++),
which `dpc-check-reference --init hash:0` sets before the step. Buffers
(batch-norm running statistics) do not enter a training-mode step.

With --check BIN (dpc's bin folder) it then runs, for each of the 32
exports, `dpc compile` and `dpc-check-reference` and prints pass or the
exact reason (dpc's one-line error or the mismatch), and compares dpc's step
with PyTorch's in float64 (model.double()): per model, the largest
relative L2 distance of a parameter's gradient from float64, for dpc and for
PyTorch's float32 step (dpc must stay within PyTorch's own spread).

Run from PyTorch 2's virtual environment (../shared/TOOLCHAIN.md), never CI:
  V/bin/python tools/reference/make_zoo.py --out test/reference/zoo \\
      [--check build/bin] [MODEL ...]
"""
import argparse
import copy
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
from export_torch import STRIPPED_LOCATION, strip_weights  # noqa: E402
from export_torch2 import export  # noqa: E402
from zoo_allowance import allowance  # noqa: E402
from zoo_hf import (TOKENS, VOCAB, bert_tiny, gpt2_hf,  # noqa: E402
                    hf_decoder, hf_encoder, roberta_hf, swin_hf, vit_hf)

BATCH = 8
LR = 0.1
SEED = 0
SAMPLES = 64
STEPS, FEATURES = 8, 16  # the LSTM's input: [BATCH, STEPS, FEATURES]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def fnv1a64(text):
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return np.uint64(value)


def hash_init(name, shape, seed=SEED):
    """runtime/train/Init.cpp's hashInitValue over a whole tensor."""
    with np.errstate(over="ignore"):
        index = np.arange(1, math.prod(shape) + 1, dtype=np.uint64)
        x = (fnv1a64(name) ^ (np.uint64(seed) * GOLDEN)) + index * GOLDEN
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    u = 2 * ((x >> np.uint64(11)).astype(np.float64) *
             (1.0 / 9007199254740992.0)) - 1
    if len(shape) >= 2:
        values = u * (1 / np.sqrt(float(math.prod(shape[1:]))))
    else:
        values = u * 0.5 + (1.0 if name.endswith("weight") else 0.0)
    return values.astype(np.float32).reshape(shape)


class TextTransformer(nn.Module):
    """Token embedding + learned positions, 2 post-norm encoder layers,
    mean over the tokens, a linear classifier."""

    def __init__(self, width=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.position = nn.Parameter(torch.zeros(1, TOKENS, width))
        layer = nn.TransformerEncoderLayer(width, 4, 64, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2,
                                             enable_nested_tensor=False)
        self.fc = nn.Linear(width, 10)

    def forward(self, tokens):
        y = self.encoder(self.embed(tokens) + self.position)
        return self.fc(y.mean(dim=1))


class CausalSelfAttention(nn.Module):
    """GPT-2's attention: one linear for q, k and v, heads of width / heads,
    scores scaled by 1 / sqrt(head width), future tokens masked to -inf
    from a causal (lower-triangular) boolean buffer."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.register_buffer("causal", torch.tril(torch.ones(
            TOKENS, TOKENS, dtype=torch.bool)), persistent=False)

    def forward(self, x):
        n, t, c = x.shape
        q, k, v = (part.view(n, t, self.heads, c // self.heads).transpose(1, 2)
                   for part in self.c_attn(x).split(c, dim=2))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        scores = scores.masked_fill(~self.causal[:t, :t], float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(n, t, c))


class GptBlock(nn.Module):
    """GPT-2's pre-norm block: attention and an MLP with GELU's tanh form
    (GPT-2's gelu_new), each added to the residual stream."""

    def __init__(self, width, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width),
                                 nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class CausalLm(nn.Module):
    """A GPT-2-like causal language model (GPT2LMHeadModel's structure at
    width 32, 2 layers, 4 heads): token and learned position embeddings,
    pre-norm blocks with a causal mask, a final LayerNorm and the LM head
    tied to the token embedding. dpc's loss takes one label per sample, so
    the step trains the next token after the sequence: cross-entropy of the
    last position's logits over the vocabulary. gpt2_hf is Transformers'
    own GPT2LMHeadModel."""

    def __init__(self, width=32, heads=4, layers=2):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, width)
        self.wpe = nn.Embedding(TOKENS, width)
        self.h = nn.ModuleList(GptBlock(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))[:, -1]


class LstmClassifier(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(FEATURES, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 10)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class DeepLstmClassifier(nn.Module):
    """Beyond the 16: two bidirectional layers, the last step of both
    directions."""

    def __init__(self, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(FEATURES, hidden, num_layers=2,
                            bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, 10)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 64),
                         nn.LayerNorm(64), nn.GELU(), nn.Dropout(0.5),
                         nn.Linear(64, 10))


def cnn():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Dropout(0.25), nn.Flatten(), nn.Linear(32 * 8 * 8, 10))


def vgg11_bn():
    """torchvision's features; at 32x32 they end 1x1, and its head
    (AdaptiveAvgPool2d(7) upsampling into a 25088 x 4096 Linear: 120 M
    parameters) gives way to the usual CIFAR head of the same form."""
    import torchvision
    model = torchvision.models.vgg11_bn(num_classes=10)
    model.avgpool = nn.Identity()
    model.classifier = nn.Sequential(
        nn.Linear(512, 512), nn.ReLU(True), nn.Dropout(),
        nn.Linear(512, 512), nn.ReLU(True), nn.Dropout(), nn.Linear(512, 10))
    return model


def vit_b_16():
    """vit_b_16's width (768, 12 heads, MLP 3072, patch 16) at 32x32 (4
    patches and the class token), 2 of its 12 layers: the full depth is
    85 M parameters for the same ops."""
    import torchvision
    return torchvision.models.VisionTransformer(
        image_size=32, patch_size=16, num_layers=2, num_heads=12,
        hidden_dim=768, mlp_dim=3072, num_classes=10)


def torchvision_model(name):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(num_classes=10)
    return make


# name: (constructor, input kind)
ZOO = {
    "resnet18": (torchvision_model("resnet18"), "images"),
    "resnet50": (torchvision_model("resnet50"), "images"),
    "mobilenet_v2": (torchvision_model("mobilenet_v2"), "images"),
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small"), "images"),
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), "images"),
    "vgg11_bn": (vgg11_bn, "images"),
    "densenet121": (torchvision_model("densenet121"), "images"),
    "squeezenet1_1": (torchvision_model("squeezenet1_1"), "images"),
    "shufflenet_v2_x0_5": (torchvision_model("shufflenet_v2_x0_5"), "images"),
    "regnet_y_400mf": (torchvision_model("regnet_y_400mf"), "images"),
    "convnext_tiny": (torchvision_model("convnext_tiny"), "images"),
    "vit_b_16": (vit_b_16, "images"),
    "text_transformer": (TextTransformer, "tokens"),
    "bert_tiny": (bert_tiny, "tokens"),
    "gpt_tiny": (CausalLm, "tokens"),
    "gpt2_hf": (gpt2_hf, "tokens"),
    "distilbert_hf": (lambda: hf_encoder("DistilBert"), "tokens"),
    "albert_hf": (lambda: hf_encoder("Albert"), "tokens"),
    "electra_hf": (lambda: hf_encoder("Electra"), "tokens"),
    "llama_hf": (lambda: hf_decoder("Llama"), "tokens"),
    "mistral_hf": (lambda: hf_decoder("Mistral"), "tokens"),
    "qwen2_hf": (lambda: hf_decoder("Qwen2"), "tokens"),
    "vit_hf": (vit_hf, "images"),
    "swin_hf": (swin_hf, "images"),
    "roberta_hf": (roberta_hf, "tokens"),
    "lstm": (LstmClassifier, "sequence"),
    "lstm_bidirectional": (DeepLstmClassifier, "sequence"),
    "mlp_layernorm": (mlp, "images"),
    "cnn_dropout": (cnn, "images"),
}


def build(name):
    """The model in training mode, dropout off, with hash:SEED weights."""
    model = ZOO[name][0]().train()
    try:  # only here and in the models that need it
        from torchvision.ops import StochasticDepth
    except ImportError:  # a model that needs it imports it itself
        StochasticDepth = nn.Dropout
    for module in model.modules():
        if isinstance(module, (nn.Dropout, StochasticDepth)):
            module.p = 0.0
        if isinstance(module, nn.MultiheadAttention):
            module.dropout = 0.0
    with torch.no_grad():
        for param_name, param in model.named_parameters():
            param.copy_(torch.from_numpy(
                hash_init(param_name, tuple(param.shape))))
    return model


def batch(name, kind):
    rng = np.random.default_rng(sum(map(ord, name)))
    if kind == "tokens":
        x = torch.from_numpy(rng.integers(0, VOCAB, (BATCH, TOKENS)))
    elif kind == "sequence":
        x = torch.from_numpy(rng.uniform(-2, 2, (BATCH, STEPS, FEATURES))
                             .astype(np.float32))
    else:
        x = torch.from_numpy(rng.uniform(-2, 2, (BATCH, 3, 32, 32))
                             .astype(np.float32))
    return x, torch.from_numpy(rng.integers(0, 10, BATCH))


def step(model, x, y, dtype, loss_fn=nn.functional.cross_entropy):
    """Loss, gradients and parameters after one SGD step, in `dtype`."""
    model = copy.deepcopy(model).to(dtype)
    if x.is_floating_point():
        x = x.to(dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    optimizer.step()
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    return loss.item(), grads, after


def write_reference(directory, name, x, y, f32, f64, allowances):
    ref = os.path.join(directory, "reference")
    shutil.rmtree(ref, ignore_errors=True)
    os.makedirs(ref)
    np.save(os.path.join(directory, "images.npy"), x.numpy())
    np.save(os.path.join(directory, "labels.npy"),
            y.numpy().astype(np.int32))
    np.save(os.path.join(directory, "loss.npy"),
            np.array(f64[0], dtype=np.float32))
    for param_name, grad in f64[1].items():
        g = grad.numpy().ravel()
        a = f64[2][param_name].numpy().ravel()
        allow_g = allowances[param_name].numpy().ravel()
        allow_a = LR * allow_g
        rng = np.random.default_rng(sum(map(ord, name + param_name)))
        picks = np.sort(rng.choice(g.size, min(SAMPLES, g.size),
                                   replace=False))
        noise_g = f32[1][param_name].double().numpy().ravel() - g
        noise_a = f32[2][param_name].double().numpy().ravel() - a
        rows = [[g.size, np.linalg.norm(g), np.linalg.norm(a),
                 np.linalg.norm(allow_g), np.linalg.norm(allow_a)],
                [0, np.linalg.norm(noise_g), np.linalg.norm(noise_a), 0, 0],
                [0, np.abs(noise_g).max(), np.abs(noise_a).max(),
                 allow_g.max(), allow_a.max()]]
        rows += [[i, g[i], a[i], allow_g[i], allow_a[i]] for i in picks]
        np.save(os.path.join(ref, param_name + ".npy"),
                np.array(rows, dtype=np.float32))


def rename_tied(m, model):
    """A tied parameter (GPT's LM head and token embedding) under the name
    named_parameters() gives it, its first alias: the legacy exporter writes
    that one, the dynamo exporter the last (lm_head.weight). The name is
    all that differs, and hash:SEED initializes by name."""
    first = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        first.setdefault(id(param), name)
    alias = {name: first[id(param)] for name, param
             in model.named_parameters(remove_duplicate=False)}
    for tensor in [*m.graph.initializer, *m.graph.value_info]:
        tensor.name = alias.get(tensor.name, tensor.name)
    for node in m.graph.node:
        for i, name in enumerate(node.input):
            node.input[i] = alias.get(name, name)


GRAPH_SIGNATURE = "pkg.torch.export.graph_signature."


def export_eager_if_needed(model, x, path, dynamo):
    """Exports `model`; where the exporter fails on a Hugging Face model's
    default (sdpa) attention, exports its eager attention instead, the same
    computation. PyTorch 2.15's dynamo exporter cannot decompose Swin's
    scaled_dot_product_attention with a float mask ("Cannot view a tensor
    with shape [N, 16, 2, 8] and strides (256, 8, 128, 1)")."""
    try:
        export(model, x, path, dynamo, strip=None)
        return
    except Exception as error:  # noqa: BLE001: retried, then reported
        inner = next((m for m in model.modules()
                      if hasattr(m, "set_attn_implementation")), None)
        if inner is None or inner.config._attn_implementation == "eager":
            raise
        print(f"  {os.path.basename(path)}: export failed with "
              f"{inner.config._attn_implementation} attention "
              f"({str(error).splitlines()[0][:80]}); exporting eager")
        inner.set_attn_implementation("eager")
    export(model, x, path, dynamo, strip=None)


def export_both(model, x, directory, kind):
    """Both exports, with every parameter and float buffer stripped (the
    exporters' own constants kept). The legacy exporter cannot convert
    grouped-query scaled_dot_product_attention (enable_gqa): a Hugging Face
    model that uses it is exported there with its eager attention, the same
    computation."""
    names = {n for n, _ in model.named_parameters()}
    # Persistent float buffers (running statistics) only: a non-persistent
    # one (a rotary embedding's inv_freq) is a constant of the model's
    # config, which the file must keep.
    persistent = model.state_dict().keys()
    names |= {n for n, b in model.named_buffers()
              if b.is_floating_point() and n in persistent}
    for dynamo in (True, False):
        path = os.path.join(directory, "dynamo.onnx" if dynamo
                            else "legacy.onnx")
        exported = copy.deepcopy(model)
        if not dynamo:
            for module in exported.modules():
                config = getattr(module, "config", None)
                if hasattr(module, "set_attn_implementation") and getattr(
                        config, "num_key_value_heads", None) not in (
                        None, getattr(config, "num_attention_heads", None)):
                    module.set_attn_implementation("eager")
                    break
        try:
            export_eager_if_needed(exported, x, path, dynamo)
        except Exception as error:  # noqa: BLE001: reported, not fatal
            print(f"  {os.path.basename(path)}: export failed: "
                  f"{str(error).splitlines()[0]}")
            continue
        m = onnx.load(path, load_external_data=False)
        strip_weights(m, 0, names)
        rename_tied(m, model)
        for entry in [*m.graph.value_info, *m.graph.initializer,
                      *m.graph.input, *m.graph.output]:
            # torch.export's provenance goes; its graph signature (which
            # initializers are buffers, not parameters) stays for dpc.
            kept = [p for p in entry.metadata_props
                    if p.key.startswith(GRAPH_SIGNATURE)]
            del entry.metadata_props[:]
            entry.metadata_props.extend(kept)
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        if os.path.exists(path + ".data"):  # the dynamo exporter's weights
            os.remove(path + ".data")


def relative_l2(a, b):
    a, b = a.double().ravel(), b.double().ravel()
    norm = b.norm().item()
    return (a - b).norm().item() / (norm if norm else 1.0)


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


def precision(dump, f32, f64, detail):
    """dpc's and PyTorch float32's distances of the gradients from float64:
    of all of them together, and of the parameter where dpc's is the most
    above PyTorch's (among those PyTorch gets within 1e-2: a gradient that
    is zero in exact arithmetic is noise in both)."""
    worst, rows = (0.0, 0.0, ""), []
    dpc = {}
    for param_name, g64 in f64[1].items():
        dpc[param_name] = torch.from_numpy(np.load(os.path.join(
            dump, "grad", param_name + ".npy"))).reshape(g64.shape)
        d_dpc = relative_l2(dpc[param_name], g64)
        d_torch = relative_l2(f32[1][param_name], g64)
        rows.append(f"    {param_name:40s} dpc {d_dpc:.2e} PyTorch "
                    f"{d_torch:.2e} ratio {d_dpc / max(d_torch, 1e-30):.2f}")
        if 0 < d_torch < 1e-2 and d_dpc / d_torch > worst[0] / max(worst[1],
                                                                 1e-30):
            worst = (d_dpc, d_torch, param_name)
    if detail:
        print("\n".join(rows))

    def total(grads):
        return torch.cat([grads[n].ravel() for n in f64[1]])
    return (f"gradient distance from float64: dpc "
            f"{relative_l2(total(dpc), total(f64[1])):.2e}, PyTorch f32 "
            f"{relative_l2(total(f32[1]), total(f64[1])):.2e}; largest ratio "
            f"at {worst[2]}: dpc {worst[0]:.2e} vs PyTorch {worst[1]:.2e}")


def check(bin_dir, directory, name, f32, f64, detail=False):
    """Compiles and checks both exports; returns a line per export."""
    lines = []
    work = tempfile.mkdtemp(prefix="zoo-")
    with open(os.path.join(work, STRIPPED_LOCATION), "wb") as f:
        f.truncate(32 << 20)
    for export_name in ("dynamo", "legacy"):
        label = f"{name}/{export_name}"
        source = os.path.join(directory, export_name + ".onnx")
        if not os.path.exists(source):
            lines.append(f"{label}: FAIL: not exported")
            continue
        model = os.path.join(work, export_name + ".onnx")
        shutil.copy(source, model)
        plan = os.path.join(work, export_name + ".plan")
        rc, out, err = run([os.path.join(bin_dir, "dpc"), "compile", model,
                            "--batch", str(BATCH), "-o", plan])
        if rc:
            lines.append(f"{label}: FAIL: {err.strip().splitlines()[-1]}")
            continue
        dump = os.path.join(work, export_name)
        rc, out, err = run([os.path.join(bin_dir, "dpc-check-reference"),
                            plan, directory, "--lr", str(LR), "--tolerance",
                            "1e-4", "--init", f"hash:{SEED}", "--dump", dump])
        verdict = "pass"
        if rc:
            bad = [line for line in out.splitlines()
                   if "TOO LARGE" in line or "reference" in line]
            reason = "; ".join(" ".join(b.split()) for b in bad[:3]) or \
                (err.strip().splitlines() or ["exit " + str(rc)])[-1]
            more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
            verdict = f"FAIL: {reason}{more}"
        if not os.path.isdir(os.path.join(dump, "grad")):
            lines.append(f"{label}: {verdict}")
            continue
        lines.append(f"{label}: {verdict}; {precision(dump, f32, f64, detail)}")
    shutil.rmtree(work)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--check", metavar="BIN")
    parser.add_argument("--no-export", action="store_true",
                        help="keep the existing ONNX files")
    parser.add_argument("--detail", action="store_true",
                        help="print every parameter's distances")
    parser.add_argument("models", nargs="*", default=list(ZOO))
    args = parser.parse_args()
    torch.set_num_threads(2)
    summary = []
    for name in args.models:
        directory = os.path.join(args.out, name)
        os.makedirs(directory, exist_ok=True)
        model = build(name)
        x, y = batch(name, ZOO[name][1])
        f32 = step(model, x, y, torch.float32)
        f64 = step(model, x, y, torch.float64)
        allowances, note = allowance(model, x, y)
        write_reference(directory, name, x, y, f32, f64, allowances)
        if not args.no_export:
            export_both(model, x[:2], directory, ZOO[name][1])
        print(f"{name}: loss {f32[0]:.6f} (float64 {f64[0]:.6f}); {note}",
              flush=True)
        if args.check:
            for line in check(args.check, directory, name, f32, f64,
                              args.detail):
                print("  " + line, flush=True)
                summary.append(line)
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
