"""`python -m ems_service.cli`: the same as `webcoach`."""

from ems_service.cli import main

if __name__ == "__main__":
    main()
