"""Testing graders: fixtures beside a grader (`smevals test`), human labels, agreement."""
