# translate: Post-LN, Pre-LN and B2T encoder-decoders on the toy translation task.
tapegrad_example(translate)
target_link_libraries(translate PRIVATE tapegrad_study)

if(TAPEGRAD_BUILD_TESTS)
  # Two tiny depths, 30 steps: the report files must exist, the values be finite and the
  # validation loss fall for every run that did not diverge; the last line only prints then.
  add_test(NAME examples.translate_smoke
    COMMAND translate --smoke --check --threads 1 --out ${CMAKE_CURRENT_BINARY_DIR}/translate_test)
  set_tests_properties(examples.translate_smoke PROPERTIES
    PASS_REGULAR_EXPRESSION "\\| post \\| 1 \\|.*\\| b2t \\| 2 \\|.*translate: check passed")
endif()
