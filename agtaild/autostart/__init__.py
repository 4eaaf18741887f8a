"""agtaild at login: the systemd user unit and the launchd agent (``agtail service``).

- ``units``: renders the unit and the plist from the templates in agtaild/data/service/.
- ``managers``: what install, uninstall and status do with systemctl and launchctl, as plans
  of steps that ``--dry-run`` prints and the real run executes.

Layer rule: imports only the foundation (agtaild.dirs, config, errors); the CLI imports it.
"""
