# -*- Python -*-
# Runs the GoogleTest unit tests (built under <build>/unittests) as lit tests,
# so that one lit run counts every test of the project.
import os

import lit.formats

config.name = "DIST-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.dist_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
if config.enable_sanitizers:
    config.environment["ASAN_OPTIONS"] = "allow_user_poisoning=false:detect_leaks=0"
