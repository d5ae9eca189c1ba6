"""The documentation checks the primitive test files share: a module's docstring examples
and one section of docs/user-guide.md, each run as a doctest in its exact words."""

import doctest
import importlib
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def check_docstring_examples(name, at_least=1):
    """Run the docstring examples of the module ``name``: none fails, ``at_least`` run."""
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS)
    assert result.failed == 0 and result.attempted >= at_least, name


def run_user_guide_section(heading, at_least):
    """The examples of one section of docs/user-guide.md, in its exact words (doctest);
    returns the section's text."""
    text = open(os.path.join(ROOT, "docs", "user-guide.md")).read()
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    section = re.sub(r"^```.*$", "", section, flags=re.M)  # fences end an example's output
    test = doctest.DocTestParser().get_doctest(section, {}, "user-guide", "user-guide.md", 0)
    assert len(test.examples) >= at_least
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    assert runner.failures == 0
    return section
