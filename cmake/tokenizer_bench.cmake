# bench/tokenizer_speed.cpp (issue 38): tokens/s of the embedding tokenizer on
# a tokenizer.json and a file of lines; bench/tokenizer_speed.py compares it
# with Hugging Face's tokenizers. Not part of the test suite.
add_executable(dlrt_tokenizer_speed ${PROJECT_SOURCE_DIR}/bench/tokenizer_speed.cpp)
target_compile_options(dlrt_tokenizer_speed PRIVATE ${DLRT_WARNINGS})
target_link_libraries(dlrt_tokenizer_speed PRIVATE dlrt_embed dlrt_internal)
