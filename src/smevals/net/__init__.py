"""HTTP for everything smevals asks over the network: the one client (net/http.py), the one
retry policy and error sorting (net/retry.py), and the reading of OpenAI-compatible chat
completions (net/chat.py). The judges, the built-in runners and the webhook checker use it;
it knows nothing of Runs, Grades or Checks.

Cheap to import: http.client, socket and ssl load on the first request.
"""
