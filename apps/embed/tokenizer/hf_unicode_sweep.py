#!/usr/bin/env python3
"""Finds the code points whose class Hugging Face's tokenizers (Rust crate
unicode_categories, an older Unicode than Python's) sees differently from
Python's unicodedata, and writes them to apps/embed/tokenizer/hf_unicode_overrides.txt,
which gen_unicode_tables.py applies. Needs the `tokenizers` package:

    scripts/setup_venv.sh build-tok tokenizers==0.19.1
    build-tok/venv/bin/python apps/embed/tokenizer/hf_unicode_sweep.py > apps/embed/tokenizer/hf_unicode_overrides.txt
"""
import os
import sys
import unicodedata as ud

from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_unicode_tables as gen  # noqa: E402

plain = BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
strip = BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
pre = BertPreTokenizer()


def hf_class(cp):
    c = chr(cp)
    n = plain.normalize_str(c)
    if n == "":
        return gen.K_OTHER
    if n == " ":
        return gen.K_SPACE
    if [t for t, _ in pre.pre_tokenize_str("a" + c + "b")] == ["a", c, "b"]:
        return gen.K_PUNCT
    if ud.normalize("NFD", c) == c and strip.normalize_str(c) == "":
        return gen.K_MN
    return gen.K_NONE


print(f"# tokenizers {__import__('tokenizers').__version__} vs unicodedata {ud.unidata_version}: code point, class")
for cp in range(0x110000):
    if 0xD800 <= cp < 0xE000 or cp in (0, 0xFFFD):
        continue
    mine, theirs = gen.base_class(cp), hf_class(cp)
    if mine != theirs:
        print(f"{cp:X} {theirs}")
