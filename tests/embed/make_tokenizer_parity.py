#!/usr/bin/env python3
"""Makes the tokenizer parity suite: trains small tokenizers of each family
with Hugging Face's `tokenizers` on a generated multilingual corpus, saves each
tokenizer.json and the ids, type ids and offsets `tokenizers` gives for a few
thousand other generated lines. tests/embed/tokenizer_parity_test.cpp loads
each tokenizer.json with dlrt's Tokenizer and requires the same for every line.

    scripts/setup_venv.sh BUILD tokenizers==0.23.3 sentencepiece==0.2.3
    BUILD/venv/bin/python tests/embed/make_tokenizer_parity.py BUILD/tokenizer_parity

Writes OUT/<name>/tokenizer.json, OUT/<name>/reference.jsonl (line 0: the
generator's versions; then {"text", "pair"?, "ids", "type_ids", "offsets"}
with character offsets as `encode(...).offsets` gives them) and OUT/STAMP last.
Deterministic: the corpus comes from a seeded generator, no downloads
(sentencepiece only supplies its built-in nmt_nfkc precompiled charsmap, the
one XLM-RoBERTa's tokenizer.json carries).
"""
import json
import os
import random
import shutil
import sys
import tempfile

os.environ["RAYON_NUM_THREADS"] = "1"  # the trainers' ties then fall the same way every run

import tokenizers  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

TEST_LINES = 3000

# ---------------------------------------------------------------- corpus

LATIN = ("café naïve résumé über straße façade déjà vu São Paulo España niño mañana "
         "crème brûlée Ærøskøbing Łódź Dvořák Ångström ça coûte élève Việt Nam tiếng "
         "Ğüçlü İstanbul şehir Žižek Ñandú garçon Ökonomie Übermut Größe sœur œuvre").split()
ENGLISH = ("the quick brown fox jumps over lazy dog model token embedding vector search "
           "server request response batch query document passage retrieval language "
           "multilingual sentence transformer attention layer weights hello world data "
           "I you we they don't can't won't it's she'll we've they're I'm he'd").split()
CYRILLIC = "привет мир Москва язык модель данные поиск быстро Україна їжак ёлка Съешь ещё".split()
GREEK = "Καλημέρα κόσμε Ελλάδα γλώσσα ΑΘΗΝΑ ψυχή".split()
ARABIC = "مرحبا بالعالم اللغة العربية كِتَابٌ مُحَمَّد السَّلَامُ عَلَيْكُمْ".split()
HEBREW = "שלום עולם עִבְרִית".split()
DEVANAGARI = "नमस्ते दुनिया हिन्दी भाषा क्षत्रिय".split()
THAI = "สวัสดีชาวโลก ภาษาไทย".split()
CJK = "中文 测试 東京 日本語 漢字 北京大学 我们 今天 天气 很好 自然语言处理".split()
KANA = "こんにちは カタカナ ひらがな ありがとう トークナイザー".split()
HANGUL = "안녕하세요 세계 한국어 토크나이저".split()
EMOJI = ["🙂", "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "🇯🇵", "❤️", "1️⃣", "🤖", "🎉", "☕", "✨", "🏳️‍🌈", "🧑🏿‍💻"]
NFKC_BAIT = ["ﬁne", "ﬂow", "Ａｐｐｌｅ", "１２３", "x²", "H₂O", "Ⅻ", "①②", "㎞", "™", "…", "½",
             "e\u0301", "A\u030a", "n\u0303o", "ｶﾀｶﾅ", "\u1100\u1161", "ǆ", "ℌ", "ﾟ", "㍿", "Ω", "Å"]
CODE = ["def f(x): return x**2", "for (int i = 0; i < n; ++i) { sum += a[i]; }", "if (a != b && c >= d) {}",
        "{\"key\": [1, 2.5, null], \"ok\": true}", "x = y->next; // comment", "SELECT * FROM t WHERE id=42;",
        "print(f'{name!r:>10}')", "std::vector<int64_t> v{1,2,3};", "$ grep -rn 'foo' src/ | wc -l",
        "<div class=\"a\">hi</div>", "#include <stdio.h>", "let s = `${a}-${b}`;", "a_b_c = __init__"]
URLS = ["https://example.com/path?q=1&lang=fr#top", "http://localhost:8080/v1/embeddings",
        "www.wikipedia.org/wiki/Tokenization", "user.name+tag@mail.example.co.uk", "ftp://files.test/x_y-z.tar.gz",
        "https://日本.jp/パス", "mailto:a@b.c"]
NUMBERS = ["3.14159", "1,000,000", "2024-06-01", "12:30:45", "-42", "+33 1 23 45 67 89", "0x1F600", "1e-9",
           "50%", "$19.99", "€5,00", "v2.0.1", "#1", "١٢٣", "१२३"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2009", "\u200b", " \t ", "\u2028", "\u0085"]
PUNCT = [".", ",", "!", "?", "...", ";", ":", "—", "–", "«", "»", "“", "”", "„", "'", "\"", "(", ")", "¿", "¡",
         "、", "。", "！", "？", "-", "/", "@", "&", "*"]
SPECIALS = ["<s>", "</s>", "<mask>", "[CLS]", "[SEP]", "[MASK]", "<unk>", "<|endoftext|>", "<pad>"]

POOLS = [LATIN, ENGLISH, ENGLISH, CYRILLIC, GREEK, ARABIC, HEBREW, DEVANAGARI, THAI, CJK, KANA, HANGUL]


def word(rng):
    r = rng.random()
    if r < 0.70:
        w = rng.choice(rng.choice(POOLS))
        k = rng.random()
        if k < 0.1:
            w = w.upper()
        elif k < 0.2:
            w = w.capitalize()
        return w
    if r < 0.77:
        return rng.choice(EMOJI)
    if r < 0.82:
        return rng.choice(NFKC_BAIT)
    if r < 0.88:
        return rng.choice(NUMBERS)
    if r < 0.92:
        return rng.choice(URLS)
    if r < 0.95:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
                       for _ in range(rng.randint(1, 12)))
    return rng.choice(PUNCT) * rng.randint(1, 3)


def line(rng):
    kind = rng.random()
    if kind < 0.08:
        return rng.choice(CODE)
    if kind < 0.11:
        return rng.choice(["", " ", "  ", "\t", "\n \n", rng.choice(SPACES) * 3])
    n = rng.randint(1, 24)
    parts = []
    for i in range(n):
        w = word(rng)
        if rng.random() < 0.03:
            w = rng.choice(SPECIALS)
        if rng.random() < 0.15:
            w += rng.choice(PUNCT)
        parts.append(w)
        if i + 1 < n:
            parts.append(rng.choice(SPACES) if rng.random() < 0.15 else ("" if rng.random() < 0.05 else " "))
    s = "".join(parts)
    if rng.random() < 0.1:
        s = rng.choice(SPACES) + s
    if rng.random() < 0.1:
        s = s + rng.choice(SPACES)
    return s


def corpus(seed, count):
    rng = random.Random(seed)
    return [line(rng) for _ in range(count)]


# ---------------------------------------------------------------- tokenizers


def nmt_nfkc_charsmap():
    """The precompiled charsmap of sentencepiece's built-in nmt_nfkc rule (a tiny
    model trained only to read its normalizer_spec)."""
    import sentencepiece as spm
    with tempfile.TemporaryDirectory() as d:
        text = os.path.join(d, "c.txt")
        with open(text, "w", encoding="utf-8") as f:
            f.write("\n".join(["the quick brown fox jumps over the lazy dog"] * 50))
        spm.SentencePieceTrainer.train(input=text, model_prefix=os.path.join(d, "m"), vocab_size=40, model_type="char",
                                       normalization_rule_name="nmt_nfkc", minloglevel=2,
                                       hard_vocab_limit=False)
        blob = open(os.path.join(d, "m.model"), "rb").read()
    # ModelProto field 3 (normalizer_spec) -> NormalizerSpec field 2 (precompiled_charsmap).
    return proto_field(proto_field(blob, 3), 2)


def proto_field(buf, want):
    i = 0

    def varint():
        nonlocal i
        v, s = 0, 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << s
            s += 7
            if b < 0x80:
                return v

    while i < len(buf):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n = varint()
            if field == want:
                return buf[i:i + n]
            i += n
        else:
            raise ValueError("unexpected wire type")
    raise KeyError(want)


def train(tok, trainer, lines):
    tok.train_from_iterator(lines, trainer=trainer)
    return tok


def make_wordpiece(lines):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    train(tok, trainers.WordPieceTrainer(vocab_size=3000, special_tokens=specials), lines)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece()
    return tok


def make_unigram_nfkc(lines):
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    specials = ["<pad>", "<unk>", "<s>", "</s>", "<mask>"]
    train(tok, trainers.UnigramTrainer(vocab_size=3000, special_tokens=specials, unk_token="<unk>"), lines)
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B:1 </s>:1", special_tokens=[("<s>", bos), ("</s>", eos)])
    tok.decoder = decoders.Metaspace()
    return tok


def make_unigram_precompiled(lines):
    """XLM-RoBERTa's layout: Precompiled nmt_nfkc + Replace of space runs, Metaspace
    prepending only at the start of the text, byte fallback, <mask> with lstrip."""
    charsmap = nmt_nfkc_charsmap()
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([
        normalizers.Precompiled(charsmap), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    train(tok, trainers.UnigramTrainer(vocab_size=2500, special_tokens=specials, unk_token="<unk>",
                                       byte_fallback=True), lines)
    tok.add_special_tokens([tokenizers.AddedToken("<mask>", lstrip=True, special=True)])
    tok.add_tokens([tokenizers.AddedToken("dlrt", single_word=True), tokenizers.AddedToken("NLP", normalized=True)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    tok.enable_truncation(max_length=40, strategy="longest_first", direction="right")
    # The trainer leaves byte_fallback off; turn it on with the 256 <0xXX> pieces
    # (as Llama-style SentencePiece vocabularies have them) so that it is tested.
    j = json.loads(tok.to_str())
    j["model"]["byte_fallback"] = True
    j["model"]["vocab"] += [[f"<0x{b:02X}>", -30.0] for b in range(256)]
    return Tokenizer.from_str(json.dumps(j))


def make_unigram_wsplit(lines):
    """Strip + NFKD + StripAccents, WhitespaceSplit then Metaspace without its split, no post-processor."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.Strip(), normalizers.NFKD(), normalizers.StripAccents(),
                                           normalizers.Replace("``", "\"")])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=False)])
    train(tok, trainers.UnigramTrainer(vocab_size=2000, special_tokens=["<unk>"], unk_token="<unk>"), lines)
    return tok


def make_bpe_roberta(lines):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    train(tok, trainers.BpeTrainer(vocab_size=3000, special_tokens=specials,
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet()), lines)
    tok.add_special_tokens([tokenizers.AddedToken("<mask>", lstrip=True, special=True)])
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")), trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    return tok


def make_bpe_gpt2(lines):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=True)
    specials = ["<|endoftext|>"]
    train(tok, trainers.BpeTrainer(vocab_size=4000, special_tokens=specials,
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet()), lines)
    tok.add_tokens([tokenizers.AddedToken(" lazy dog", rstrip=True)])
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    tok.enable_truncation(max_length=24, strategy="only_first", direction="left")
    return tok


FAMILIES = {
    "wordpiece": make_wordpiece,
    "unigram_nfkc": make_unigram_nfkc,
    "unigram_precompiled": make_unigram_precompiled,
    "unigram_wsplit": make_unigram_wsplit,
    "bpe_roberta": make_bpe_roberta,
    "bpe_gpt2": make_bpe_gpt2,
}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    train_lines = corpus(1, 20000)
    test_lines = corpus(2, TEST_LINES)
    header = {"tokenizers": tokenizers.__version__, "generator": os.path.basename(__file__)}
    summary = []
    for name, make in FAMILIES.items():
        tok = make(train_lines)
        d = os.path.join(out, name)
        os.makedirs(d)
        tok.save(os.path.join(d, "tokenizer.json"))
        n = 0
        with open(os.path.join(d, "reference.jsonl"), "w", encoding="utf-8") as f:
            f.write(json.dumps(header) + "\n")
            for i, text in enumerate(test_lines):
                e = tok.encode(text)
                f.write(json.dumps({"text": text, "ids": e.ids, "type_ids": e.type_ids,
                                    "offsets": e.offsets,
                                    "decoded": tok.decode(e.ids, skip_special_tokens=True),
                                    "decoded_all": tok.decode(e.ids, skip_special_tokens=False)},
                                   ensure_ascii=False) + "\n")
                n += 1
                if i % 4 == 0:
                    pair = test_lines[(i * 7 + 1) % len(test_lines)]
                    try:
                        e = tok.encode(text, pair)
                    except Exception:  # only_first truncation of a too-short first text
                        continue
                    f.write(json.dumps({"text": text, "pair": pair, "ids": e.ids, "type_ids": e.type_ids,
                                        "offsets": e.offsets, "sequence_ids": e.sequence_ids},
                                       ensure_ascii=False) + "\n")
                    n += 1
        summary.append(f"{name}: {n} encodings")
    with open(os.path.join(out, "lines.txt"), "w", encoding="utf-8") as f:
        f.write(json.dumps(test_lines, ensure_ascii=False))
    with open(os.path.join(out, "STAMP"), "w") as f:
        f.write(f"tokenizers {tokenizers.__version__}; " + "; ".join(summary) + "\n")
    print(open(os.path.join(out, "STAMP")).read().strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
