# Shared by the scripts that set up the project's own servers and tools. Source it after
# setting NAME (the script's name, for messages).

say() { echo "$NAME: $*" >&2; }
die() {
    say "$*"
    exit 1
}

# An absolute path for $1 (relative ones are taken from the current directory): servers
# resolve relative paths from their own data directory.
abs_path() {
    case "$1" in
        /*) echo "$1" ;;
        *) echo "$PWD/$1" ;;
    esac
}

# apt_install WHAT PERMIT_VAR PACKAGE...: install Debian's packages for WHAT, unless the
# variable named PERMIT_VAR is 0, we are not root, or there is no apt-get (each a clear error).
apt_install() {
    local what=$1 permit=$2
    shift 2
    [[ "${!permit:-1}" != "0" ]] || die "$what is not installed and $permit=0"
    [[ "$(id -u)" == 0 ]] || die "$what is not installed; as root this script would apt-get install it (or: sudo apt-get install $*)"
    command -v apt-get >/dev/null || die "$what is not installed and there is no apt-get"
    say "installing Debian's $* (apt-get)…"
    local started=$SECONDS
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 </dev/null
    apt-get install -y -qq --no-install-recommends "$@" >&2 </dev/null
    say "installed in $((SECONDS - started)) s"
}

# one_at_a_time DIR: hold a lock (DIR/../.NAME.lock) until this script ends, so that two
# starts or stops of one server at once (parallel test processes, two terminals) run one
# after the other instead of each finding the other's half-started server.
one_at_a_time() {
    local parent
    parent="$(dirname "$1")"
    mkdir -p "$parent"
    exec 9>"$parent/.$NAME.lock"
    flock 9
}
