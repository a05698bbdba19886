# adaln_conditional: one model for several tasks, told the task by AdaLN-Zero or by a token.
tapegrad_example(adaln_conditional)
target_link_libraries(adaln_conditional PRIVATE tapegrad_study)

if(TAPEGRAD_BUILD_TESTS)
  # One tiny layer, 30 steps per variant: the report files must exist, the values be finite and
  # the validation loss fall for both variants; the last line only prints then.
  add_test(NAME examples.adaln_conditional_smoke
    COMMAND adaln_conditional --smoke --check --threads 1 --out ${CMAKE_CURRENT_BINARY_DIR}/adaln_conditional_test)
  set_tests_properties(examples.adaln_conditional_smoke PROPERTIES
    PASS_REGULAR_EXPRESSION "\\| adaln_zero \\| sort \\|.*\\| task_token \\| all \\|.*adaln_conditional: check passed")
endif()
