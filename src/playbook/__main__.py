"""`python -m playbook`: the `playbook` command."""

from playbook.launcher import run

if __name__ == "__main__":
    run()
