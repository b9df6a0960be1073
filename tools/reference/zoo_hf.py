"""The zoo's Hugging Face Transformers models (the transformers package,
only for these), at tiny configs: BERT, DistilBERT, ALBERT, ELECTRA and
RoBERTa classify a sequence of VOCAB tokens; GPT-2, Llama, Mistral and
Qwen2 predict the token after the sequence; ViT and Swin classify the
zoo's 3x32x32 images. Each is wrapped to take one tensor and return the
logits, as make_zoo.py's step and exporters want."""
from torch import nn

VOCAB, TOKENS = 100, 16  # the token models' input: [BATCH, TOKENS]


class TokenLogits(nn.Module):
    """A Transformers model of token ids, returning its logits."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens):
        return self.model(input_ids=tokens).logits


def bert_tiny():
    """Hugging Face BERT for sequence classification (the transformers
    package, only for this model): 2 layers of width 32, 4 heads, eager
    attention over the all-ones mask it makes itself; token, position and
    token-type embeddings, GELU, the tanh pooler. No padding id: ONNX's
    Gather has no padding_idx, whose row PyTorch leaves without gradient
    (a dpc plan trains every row it reads)."""
    import transformers
    config = transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=TOKENS, num_labels=10, pad_token_id=None,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        attn_implementation="eager")
    return TokenLogits(transformers.BertForSequenceClassification(config))


def hf_encoder(family):
    """A Hugging Face encoder for sequence classification (the transformers
    package): DistilBERT, ALBERT or ELECTRA, 2 layers of width 32, 4 heads,
    every dropout off, their default attention; no padding id (as
    bert_tiny)."""
    import transformers
    common = dict(vocab_size=VOCAB, max_position_embeddings=TOKENS,
                  num_labels=10, pad_token_id=None)
    if family == "DistilBert":
        config = transformers.DistilBertConfig(
            dim=32, hidden_dim=64, n_layers=2, n_heads=4, dropout=0.0,
            attention_dropout=0.0, seq_classif_dropout=0.0, **common)
    else:
        config = getattr(transformers, family + "Config")(
            embedding_size=16, hidden_size=32, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            classifier_dropout_prob=0.0, **common)
    return TokenLogits(
        getattr(transformers, family + "ForSequenceClassification")(config))


def hf_decoder(family):
    """A Hugging Face decoder LM (Llama, Mistral or Qwen2): 2 layers of
    width 32, 4 query heads sharing 2 key-value heads (grouped-query
    attention), rotary positions, RMSNorm, SwiGLU, the default attention;
    as gpt2_hf, cross-entropy of the last position's logits."""
    import transformers
    config = getattr(transformers, family + "Config")(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=TOKENS, pad_token_id=None,
        bos_token_id=None, eos_token_id=None)
    return Gpt2LastLogits(
        getattr(transformers, family + "ForCausalLM")(config))


class Gpt2LastLogits(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens):
        return self.model(input_ids=tokens).logits[:, -1]


def gpt2_hf():
    """Hugging Face's own GPT2LMHeadModel (the transformers package): 2
    layers of width 32, 2 heads, vocabulary 100, 16 positions, every
    dropout off, the LM head tied to the token embedding, and the default
    attention (scaled_dot_product_attention, as users get it). In forward
    it makes its position ids (an arange over the sequence) and causal mask
    (a comparison of aranges, expanded to the batch); the exporters write
    that as shape arithmetic, a Trilu of ones (legacy) and a NaN guard
    after the softmax (dynamo), which dpc folds at import. As gpt_tiny,
    dpc's loss takes one label per sample: cross-entropy of the last
    position's logits (the next token after the sequence)."""
    import transformers
    config = transformers.GPT2Config(
        vocab_size=VOCAB, n_positions=TOKENS, n_embd=32, n_layer=2,
        n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        bos_token_id=None, eos_token_id=None)
    return Gpt2LastLogits(transformers.GPT2LMHeadModel(config))


class ImageLogits(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, images):
        return self.model(pixel_values=images).logits


def vit_hf():
    """Hugging Face's ViTForImageClassification (the transformers package)
    on the zoo's 3x32x32 images: patch 8 (16 patches and the class token),
    2 layers of width 32, 2 heads, every dropout off, the default
    attention; the head classifies the class token."""
    import transformers
    config = transformers.ViTConfig(
        image_size=32, patch_size=8, num_channels=3, hidden_size=32,
        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        num_labels=10)
    return ImageLogits(transformers.ViTForImageClassification(config))


def swin_hf():
    """Hugging Face's SwinForImageClassification on 3x32x32 images: patch
    4 (8x8 patches), windows of 4, two stages of 2 blocks (the first
    stage's second block shifts its windows: a roll and the shifted
    windows' attention mask; patch merging to 4x4, where the window covers
    the whole map and nothing shifts), embedding 16, heads 2 and 4, the
    relative-position bias table, every dropout and drop path off."""
    import transformers
    config = transformers.SwinConfig(
        image_size=32, patch_size=4, num_channels=3, embed_dim=16,
        depths=[2, 2], num_heads=[2, 4], window_size=4, mlp_ratio=2.0,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        drop_path_rate=0.0, num_labels=10)
    return ImageLogits(transformers.SwinForImageClassification(config))


def roberta_hf():
    """Hugging Face's RobertaForSequenceClassification: 2 layers of width
    32, 4 heads, every dropout off. Its position ids are made from the
    tokens at run time (padding id + the cumulative sum of tokens !=
    padding id), and its embeddings leave the padding row without gradient
    (which ONNX's Gather cannot say): the padding id is VOCAB, one row past
    the tokens the batch draws, so no token is padding and positions run
    VOCAB + 1 .. VOCAB + TOKENS."""
    import transformers
    config = transformers.RobertaConfig(
        vocab_size=VOCAB + 1, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=VOCAB + TOKENS + 1, num_labels=10,
        pad_token_id=VOCAB, bos_token_id=None, eos_token_id=None,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        classifier_dropout=0.0)
    return TokenLogits(
        transformers.RobertaForSequenceClassification(config))
