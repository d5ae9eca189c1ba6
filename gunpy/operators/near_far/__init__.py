"""The two-level near/far priority queue (Davidson et al.; Gunrock section 4.4.2)."""
