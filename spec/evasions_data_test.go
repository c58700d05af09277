package spec

// Code below is data: the evasion table of TestEvasions. For each rule, other
// spellings and forms of its hazard, indirections (anchors, extends, interpolation, profiles,
// passthrough, env_file, named volumes) and defaults that apply when a key is absent. Every
// entry must fire its rule.

type evasion struct {
	name, src, opts string // opts: a fixture header's options ("engine=25.0.2", "format=qm")
}

var evasions = map[string][]evasion{
	"CMP-H01": {
		{"quoted string", "services:\n  default:\n    image: x:1\n    privileged: \"true\"\n", ""},
		{"YAML anchor merge", "x-p: &p\n  privileged: true\nservices:\n  default:\n    <<: *p\n    image: x:1\n", ""},
		{"extends in the same file", "services:\n  base:\n    image: x:1\n    privileged: true\n    profiles: [never]\n  default:\n    extends: base\n", ""},
		{"service behind a profile", "services:\n  default:\n    image: x:1\n  helper:\n    image: y:1\n    profiles: [debug]\n    privileged: true\n", ""},
		{"interpolated default", "services:\n  default:\n    image: x:1\n    privileged: ${PRIV:-true}\n", ""},
	},
	"CMP-H02": {
		{"short syntax", "services:\n  default:\n    image: x:1\n    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n", ""},
		{"parent directory /var/run", "services:\n  default:\n    image: x:1\n    volumes:\n      - /var/run:/host/run:ro\n", ""},
		{"parent directory /run", "services:\n  default:\n    image: x:1\n    volumes:\n      - type: bind\n        source: /run\n        target: /r\n", ""},
		{"non-canonical path", "services:\n  default:\n    image: x:1\n    volumes:\n      - //var/run/../run/docker.sock:/s\n", ""},
		{"podman socket", "services:\n  default:\n    image: x:1\n    volumes:\n      - /run/podman/podman.sock:/run/podman/podman.sock\n", ""},
		{"containerd state dir", "services:\n  default:\n    image: x:1\n    volumes:\n      - /run/containerd:/c\n", ""},
		{"named volume bind in disguise", "services:\n  default:\n    image: x:1\n    volumes:\n      - sock:/var/run\nvolumes:\n  sock:\n    driver_opts: {type: none, o: bind, device: /var/run}\n", ""},
		{"socket renamed at the target", "services:\n  default:\n    image: x:1\n    volumes:\n      - /srv/engine/docker.sock:/tmp/api.sock\n", ""},
	},
	"CMP-H03": {
		{"on a helper service", "services:\n  default:\n    image: x:1\n  helper:\n    image: y:1\n    use_api_socket: true\n", ""},
	},
	"CMP-H04": {
		{"read-only still leaks", "services:\n  default:\n    image: x:1\n    volumes:\n      - /etc:/host-etc:ro\n", ""},
		{"root filesystem", "services:\n  default:\n    image: x:1\n    volumes:\n      - /:/host\n", ""},
		{"parent of a critical dir", "services:\n  default:\n    image: x:1\n    volumes:\n      - /var/lib:/vl\n", ""},
		{"dot-dot path", "services:\n  default:\n    image: x:1\n    volumes:\n      - /srv/../etc:/x\n", ""},
		{"trailing slash", "services:\n  default:\n    image: x:1\n    volumes:\n      - /root/:/x\n", ""},
		{"named volume bind in disguise", "services:\n  default:\n    image: x:1\n    volumes:\n      - hostetc:/x\nvolumes:\n  hostetc:\n    driver_opts: {type: none, o: bind, device: /etc}\n", ""},
		{"home directory", "services:\n  default:\n    image: x:1\n    volumes:\n      - /home/op/.ssh:/keys:ro\n", ""},
	},
	"CMP-H05": {
		{"propagation in the short syntax", "services:\n  default:\n    image: x:1\n    volumes:\n      - /srv/data:/data:rshared\n", ""},
		{"relative host path", "services:\n  default:\n    image: x:1\n    volumes:\n      - ./data:/data\n", ""},
		{"long syntax slave", "services:\n  default:\n    image: x:1\n    volumes:\n      - type: bind\n        source: /srv/x\n        target: /x\n        bind: {propagation: rslave}\n", ""},
	},
	"CMP-H06": {
		{"lower case", "services:\n  default:\n    image: x:1\n    cap_add: [sys_admin]\n", ""},
		{"CAP_ prefix", "services:\n  default:\n    image: x:1\n    cap_add: [CAP_SYS_MODULE]\n", ""},
		{"ALL", "services:\n  default:\n    image: x:1\n    cap_add: [all]\n", ""},
		{"padded", "services:\n  default:\n    image: x:1\n    cap_add: [\" DAC_READ_SEARCH \"]\n", ""},
		{"second tier", "services:\n  default:\n    image: x:1\n    cap_add: [cap_sys_ptrace]\n", ""},
	},
	"CMP-H07": {
		{"lower case non-default", "services:\n  default:\n    image: x:1\n    cap_add: [ipc_lock]\n", ""},
	},
	"CMP-H08": {
		{"drop list without ALL", "services:\n  default:\n    image: x:1\n    cap_drop: [NET_RAW, MKNOD]\n", ""},
		{"cap_drop absent", "services:\n  default:\n    image: x:1\n", ""},
	},
	"CMP-H09": {
		{"added back after ALL", "services:\n  default:\n    image: x:1\n    cap_drop: [ALL]\n    cap_add: [CAP_NET_RAW]\n", ""},
		{"default set kept", "services:\n  default:\n    image: x:1\n    cap_drop: [MKNOD]\n", ""},
	},
	"CMP-H10": {
		{"equals separator", "services:\n  default:\n    image: x:1\n    security_opt: [seccomp=unconfined]\n", ""},
		{"upper case", "services:\n  default:\n    image: x:1\n    security_opt: [SECCOMP:UNCONFINED]\n", ""},
		{"custom profile (INFO)", "services:\n  default:\n    image: x:1\n    security_opt: [seccomp=./allow-all.json]\n", ""},
	},
	"CMP-H11": {
		{"equals separator", "services:\n  default:\n    image: x:1\n    security_opt: [apparmor=unconfined]\n", ""},
		{"upper case", "services:\n  default:\n    image: x:1\n    security_opt: [APPARMOR:UNCONFINED]\n", ""},
	},
	"CMP-H12": {
		{"type spc_t", "services:\n  default:\n    image: x:1\n    security_opt: [\"label=type:spc_t\"]\n", ""},
		{"colon separator", "services:\n  default:\n    image: x:1\n    security_opt: [\"label:disable\"]\n", ""},
	},
	"CMP-H13": {
		{"explicitly false", "services:\n  default:\n    image: x:1\n    security_opt: [\"no-new-privileges:false\"]\n", ""},
		{"equals false", "services:\n  default:\n    image: x:1\n    security_opt: [\"no-new-privileges=false\"]\n", ""},
	},
	"CMP-H14": {
		{"colon separator", "services:\n  default:\n    image: x:1\n    security_opt: [systempaths:unconfined]\n", ""},
	},
	"CMP-H15": {
		{"colon separator", "services:\n  default:\n    image: x:1\n    security_opt: [\"writable-cgroups:true\"]\n", ""},
	},
	"CMP-H16": {
		{"upper case", "services:\n  default:\n    image: x:1\n    pid: HOST\n", ""},
		{"another service's namespace", "services:\n  default:\n    image: x:1\n    pid: service:helper\n  helper:\n    image: y:1\n", ""},
		{"anchor", "x-h: &h\n  pid: host\nservices:\n  default:\n    <<: *h\n    image: x:1\n", ""},
	},
	"CMP-H17": {
		{"upper case", "services:\n  default:\n    image: x:1\n    ipc: HOST\n", ""},
		{"shareable", "services:\n  default:\n    image: x:1\n    ipc: shareable\n", ""},
	},
	"CMP-H18": {
		{"upper case", "services:\n  default:\n    image: x:1\n    uts: HOST\n", ""},
	},
	"CMP-H19": {
		{"upper case", "services:\n  default:\n    image: x:1\n    userns_mode: HOST\n", ""},
	},
	"CMP-H20": {
		{"cgroup_parent", "services:\n  default:\n    image: x:1\n    cgroup_parent: /system.slice\n", ""},
	},
	"CMP-H21": {
		{"long syntax", "services:\n  default:\n    image: x:1\n    devices:\n      - source: /dev/sda\n        target: /dev/xda\n", ""},
		{"by-id path", "services:\n  default:\n    image: x:1\n    devices: [\"/dev/disk/by-id/nvme-x:/dev/d\"]\n", ""},
		{"all char devices", "services:\n  default:\n    image: x:1\n    device_cgroup_rules: [\"c *:* rwm\"]\n", ""},
		{"all block devices", "services:\n  default:\n    image: x:1\n    device_cgroup_rules: [\"b *:* rwm\"]\n", ""},
		{"memory device", "services:\n  default:\n    image: x:1\n    devices: [\"/dev/mem:/dev/mem\"]\n", ""},
	},
	"CMP-H22": {
		{"gpus all", "services:\n  default:\n    image: x:1\n    gpus: all\n", ""},
		{"deploy reservation", "services:\n  default:\n    image: x:1\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: 1\n              capabilities: [gpu]\n", ""},
	},
	"CMP-H23": {
		{"list form", "services:\n  default:\n    image: x:1\n    sysctls: [\"net.ipv4.conf.all.route_localnet=1\"]\n", ""},
		{"slash form", "services:\n  default:\n    image: x:1\n    sysctls:\n      net/ipv4/conf/eth0/route_localnet: 1\n", ""},
		{"unsafe kernel key", "services:\n  default:\n    image: x:1\n    sysctls:\n      kernel.core_pattern: '|/x'\n", ""},
		{"value smuggling a second assignment", "services:\n  default:\n    image: x:1\n    sysctls:\n      kernel.shm_rmid_forced: \"1+kernel.core_pattern=|/x\"\n", ""},
	},
	"CMP-H24": {
		{"string false", "services:\n  default:\n    image: x:1\n    read_only: \"false\"\n", ""},
		{"absent", "services:\n  default:\n    image: x:1\n", ""},
	},
	"CMP-H25": {
		{"uid 0 with group", "services:\n  default:\n    image: x:1\n    user: \"0:1000\"\n", ""},
		{"root name with group", "services:\n  default:\n    image: x:1\n    user: \"root:root\"\n", ""},
		{"absent", "services:\n  default:\n    image: x:1\n", ""},
	},
	"CMP-H26": {
		{"runc named", "services:\n  default:\n    image: x:1\n    runtime: runc\n", ""},
		{"containerd runc shim", "services:\n  default:\n    image: x:1\n    runtime: io.containerd.runc.v2\n", ""},
	},
	"CMP-H27": {
		{"privileged post_start", "services:\n  default:\n    image: x:1\n    post_start:\n      - command: [sh, -c, x]\n        privileged: true\n", ""},
		{"root pre_stop in a non-root service", "services:\n  default:\n    image: x:1\n    user: \"1000\"\n    pre_stop:\n      - command: [x]\n        user: \"0\"\n", ""},
	},
	"CMP-H28": {
		{"string true", "services:\n  default:\n    image: x:1\n    oom_kill_disable: \"true\"\n", ""},
		{"negative score", "services:\n  default:\n    image: x:1\n    oom_score_adj: -1000\n", ""},
	},
	"CMP-H29": {
		{"fd path", "services:\n  default:\n    image: x:1\n    working_dir: /proc/self/fd/7\n", ""},
		{"non-canonical", "services:\n  default:\n    image: x:1\n    working_dir: /srv/../proc/self/cwd\n", ""},
		{"sysfs", "services:\n  default:\n    image: x:1\n    working_dir: /sys/fs/cgroup\n", ""},
	},
	"CMP-N01": {
		{"upper case", "services:\n  default:\n    image: x:1\n    network_mode: HOST\n", ""},
		{"host network by name", "services:\n  default:\n    image: x:1\n    networks: [h]\nnetworks:\n  h:\n    external: true\n    name: host\n", ""},
	},
	"CMP-N02": {
		{"container namespace", "services:\n  default:\n    image: x:1\n    network_mode: container:abc123\n", ""},
		{"service namespace", "services:\n  default:\n    image: x:1\n    network_mode: service:proxy\n  proxy:\n    image: y:1\n", ""},
	},
	"CMP-N03": {
		{"network_mode bridge", "services:\n  default:\n    image: x:1\n    network_mode: bridge\n", ""},
		{"network_mode default", "services:\n  default:\n    image: x:1\n    network_mode: default\n", ""},
		{"implicit default network", "services:\n  default:\n    image: x:1\n", ""},
		{"internal spelled false", "services:\n  default:\n    image: x:1\n    networks: [n]\nnetworks:\n  n:\n    internal: \"false\"\n", ""},
		{"engine bridge by name", "services:\n  default:\n    image: x:1\n    networks: [b]\nnetworks:\n  b:\n    external: true\n    name: bridge\n", ""},
		{"borrowed namespace", "services:\n  default:\n    image: x:1\n    network_mode: service:helper\n  helper:\n    image: y:1\n", ""},
	},
	"CMP-N04": {
		{"scorer by role label", "services:\n  default:\n    image: x:1\n    networks: [n]\n  s:\n    image: y:1\n    networks: [n]\n    labels: {dev.rangekeeper.role: scorer}\nnetworks:\n  n: {internal: true}\n", ""},
		{"scorer by name", "services:\n  default:\n    image: x:1\n    networks: [n]\n  grader:\n    image: y:1\n    networks: [n]\nnetworks:\n  n: {internal: true}\n", ""},
		{"scorer namespace borrowed", "services:\n  default:\n    image: x:1\n    network_mode: service:judge\n  judge:\n    image: y:1\n", ""},
	},
	"CMP-N05": {
		{"dual-homed target", "services:\n  default:\n    image: x:1\n    networks: [inner]\n  target:\n    image: y:1\n    networks: [inner, outer]\nnetworks:\n  inner: {internal: true}\n  outer: {}\n", ""},
	},
	"CMP-N06": {
		{"v prefix", "services:\n  default:\n    image: x:1\n    networks: [n]\nnetworks:\n  n: {internal: true}\n", "engine=v25.0.2"},
		{"debian build (INFO)", "services:\n  default:\n    image: x:1\n    networks: [n]\nnetworks:\n  n: {internal: true}\n", "engine=20.10.24+dfsg1"},
	},
	"CMP-N07": {
		{"single string", "services:\n  default:\n    image: x:1\n    dns: 8.8.8.8\n", ""},
		{"IPv6 resolver", "services:\n  default:\n    image: x:1\n    dns: [\"2001:4860:4860::8888\"]\n", ""},
	},
	"CMP-N08": {
		{"legacy colon form", "services:\n  default:\n    image: x:1\n    extra_hosts: [\"metadata:169.254.169.254\"]\n", ""},
		{"map form host-gateway", "services:\n  default:\n    image: x:1\n    extra_hosts:\n      host.docker.internal: host-gateway\n", ""},
		{"IPv6 metadata", "services:\n  default:\n    image: x:1\n    extra_hosts: [\"imds=[fd00:ec2::254]\"]\n", ""},
		{"Azure WireServer", "services:\n  default:\n    image: x:1\n    extra_hosts: [\"w=168.63.129.16\"]\n", ""},
	},
	"CMP-N09": {
		{"all interfaces explicit", "services:\n  default:\n    image: x:1\n    ports: [\"0.0.0.0:8080:80\"]\n", ""},
		{"range", "services:\n  default:\n    image: x:1\n    ports: [\"8000-8010:8000-8010\"]\n", ""},
		{"IPv6 any", "services:\n  default:\n    image: x:1\n    ports: [\"[::]:80:80\"]\n", ""},
		{"long syntax", "services:\n  default:\n    image: x:1\n    ports:\n      - target: 80\n        published: \"8080\"\n", ""},
	},
	"CMP-N10": {
		{"string true", "services:\n  default:\n    image: x:1\n    networks: [n]\nnetworks:\n  n: {internal: true, enable_ipv6: \"true\"}\n", ""},
	},
	"CMP-N11": {
		{"list form", "services:\n  default:\n    image: x:1\n    environment: [\"OPENAI_BASE_URL=http://m\"]\n", ""},
		{"passthrough", "services:\n  default:\n    image: x:1\n    environment: [ANTHROPIC_BASE_URL]\n", ""},
	},
	"CMP-N12": {
		{"list form lower case", "services:\n  default:\n    image: x:1\n    environment: [\"no_proxy=*\"]\n", ""},
		{"metadata exemption", "services:\n  default:\n    image: x:1\n    environment:\n      NO_PROXY: localhost,169.254.169.254\n", ""},
	},
	"CMP-N13": {
		{"legacy external name", "services:\n  default:\n    image: x:1\n    networks: [n]\nnetworks:\n  n:\n    external:\n      name: shared\n", ""},
		{"external true", "services:\n  default:\n    image: x:1\n    networks: [n]\nnetworks:\n  n:\n    external: true\n", ""},
	},
	"CMP-N14": {
		{"string true", "services:\n  default:\n    image: x:1\n    networks: [n]\nnetworks:\n  n: {internal: true, attachable: \"true\"}\n", ""},
	},
	"CMP-N15": {
		{"external_links", "services:\n  default:\n    image: x:1\n    external_links: [db]\n", ""},
	},
	"CMP-R01": {
		{"zero is unlimited", "services:\n  default:\n    image: x:1\n    mem_limit: 0\n", ""},
		{"absent", "services:\n  default:\n    image: x:1\n", ""},
	},
	"CMP-R02": {
		{"zero cpus is unlimited", "services:\n  default:\n    image: x:1\n    cpus: 0\n", ""},
	},
	"CMP-R03": {
		{"unlimited -1", "services:\n  default:\n    image: x:1\n    pids_limit: -1\n", ""},
		{"zero", "services:\n  default:\n    image: x:1\n    pids_limit: 0\n", ""},
		{"deploy pids zero", "services:\n  default:\n    image: x:1\n    deploy:\n      resources:\n        limits:\n          pids: 0\n", ""},
	},
	"CMP-R04": {
		{"unlimited swap", "services:\n  default:\n    image: x:1\n    mem_limit: 64m\n    memswap_limit: -1\n", ""},
	},
	"CMP-R05": {
		{"unlimited nofile", "services:\n  default:\n    image: x:1\n    ulimits:\n      nofile: -1\n", ""},
		{"memlock", "services:\n  default:\n    image: x:1\n    ulimits:\n      memlock: {soft: 1024, hard: 1024}\n", ""},
	},
	"CMP-R06": {
		{"tmpfs without noexec", "services:\n  default:\n    image: x:1\n    tmpfs: [\"/tmp:size=64m\"]\n", ""},
		{"huge shm", "services:\n  default:\n    image: x:1\n    shm_size: 2g\n", ""},
	},
	"CMP-R07": {
		{"unless-stopped", "services:\n  default:\n    image: x:1\n    restart: unless-stopped\n", ""},
	},
	"CMP-R08": {
		{"init false", "services:\n  default:\n    image: x:1\n    init: false\n", ""},
	},
	"CMP-R09": {
		{"healthcheck disabled", "services:\n  default:\n    image: x:1\n    healthcheck: {disable: true}\n", ""},
	},
	"CMP-T01": {
		{"list without value", "services:\n  default:\n    image: x:1\n    environment: [ANTHROPIC_API_KEY]\n", ""},
		{"map with null", "services:\n  default:\n    image: x:1\n    environment:\n      OPENAI_API_KEY:\n", ""},
		{"renamed by interpolation", "services:\n  default:\n    image: x:1\n    environment:\n      MODEL: ${OPENAI_API_KEY}\n", ""},
		{"value shape under a plain name", "services:\n  default:\n    image: x:1\n    environment:\n      CONFIG: AKIAABCDEFGHIJKLMNOP\n", ""},
		{"lower-case name", "services:\n  default:\n    image: x:1\n    environment: [\"github_token=x\"]\n", ""},
		{"secret from the harness environment", "services:\n  default:\n    image: x:1\n    secrets: [k]\nsecrets:\n  k:\n    environment: HF_TOKEN\n", ""},
		{"on a non-agent service", "services:\n  default:\n    image: x:1\n  helper:\n    image: y:1\n    environment: [DB_PASSWORD=x]\n", ""},
	},
	"CMP-T10": {
		{"tilde home", "services:\n  default:\n    image: x:1\n    volumes:\n      - ~/.kube:/root/.kube:ro\n", ""},
		{"HOME variable", "services:\n  default:\n    image: x:1\n    volumes:\n      - ${HOME}/.aws:/root/.aws:ro\n", ""},
		{"whole home directory", "services:\n  default:\n    image: x:1\n    volumes:\n      - /home/op:/host-home:ro\n", ""},
		{"root home absolute", "services:\n  default:\n    image: x:1\n    volumes:\n      - /root/.docker/config.json:/root/.docker/config.json\n", ""},
		{"one file inside", "services:\n  default:\n    image: x:1\n    volumes:\n      - /home/op/.ssh/id_ed25519:/k:ro\n", ""},
		{"gcloud long syntax", "services:\n  default:\n    image: x:1\n    volumes:\n      - type: bind\n        source: /home/op/.config/gcloud\n        target: /g\n", ""},
		{"renamed at the target", "services:\n  default:\n    image: x:1\n    volumes:\n      - /srv/ops/kubeconfig:/root/.kube/config:ro\n", ""},
		{"secret file", "services:\n  default:\n    image: x:1\n    secrets: [n]\nsecrets:\n  n:\n    file: /home/op/.netrc\n", ""},
		{"named volume bind in disguise", "services:\n  default:\n    image: x:1\n    volumes:\n      - creds:/c\nvolumes:\n  creds:\n    driver_opts: {type: none, o: bind, device: /home/op/.aws}\n", ""},
	},
	"CMP-H30": {
		{"list form", "services:\n  default:\n    image: x:1\n    environment: [\"DOCKER_HOST=tcp://dind:2375\"]\n  dind:\n    image: docker:dind\n    privileged: true\n", ""},
		{"passthrough", "services:\n  default:\n    image: x:1\n    environment: [DOCKER_HOST]\n", ""},
		{"host engine by address", "services:\n  default:\n    image: x:1\n    environment:\n      DOCKER_HOST: tcp://172.17.0.1:2375\n", ""},
		{"alias of the dind", "services:\n  default:\n    image: x:1\n    environment:\n      docker_host: tcp://engine:2376\n  dind:\n    image: docker:dind\n    networks:\n      n: {aliases: [engine]}\nnetworks:\n  n: {}\n", ""},
		{"podman", "services:\n  default:\n    image: x:1\n    environment:\n      CONTAINER_HOST: ssh://core@10.0.0.5/run/podman/podman.sock\n", ""},
	},
	"CMP-T02": {
		{"long syntax flag", "services:\n  default:\n    image: x:1\n    secrets:\n      - source: flag\n        target: /run/f\nsecrets:\n  flag: {file: ./f}\n", ""},
		{"config shared with scorer", "services:\n  default:\n    image: x:1\n    configs: [answers_cfg]\n  scorer:\n    image: y:1\n    configs: [answers_cfg]\nconfigs:\n  answers_cfg: {file: ./a}\n", ""},
	},
	"CMP-T03": {
		{"volumes_from", "services:\n  default:\n    image: x:1\n    volumes_from: [helper]\n  helper:\n    image: y:1\n", ""},
		{"shared with scorer", "services:\n  default:\n    image: x:1\n    volumes: [\"data:/d\"]\n  scorer:\n    image: y:1\n    volumes: [\"data:/s\"]\nvolumes:\n  data: {}\n", ""},
	},
	"CMP-T04": {
		{"registry port, no tag", "services:\n  default:\n    image: registry:5000/agent\n", ""},
		{"latest", "services:\n  default:\n    image: x:latest\n", ""},
		{"tag without digest", "services:\n  default:\n    image: x:1.2\n", ""},
	},
	"CMP-T05": {
		{"registry outside the allowlist", "services:\n  default:\n    image: evil.example/x:1\n", "registries=registry.example"},
		{"implicit docker.io", "services:\n  default:\n    image: library/x:1\n", "registries=registry.example"},
	},
	"CMP-T06": {
		{"list form passthrough", "services:\n  default:\n    image: x:1\n    build:\n      context: .\n      args: [GITHUB_TOKEN]\n", ""},
		{"interpolated", "services:\n  default:\n    image: x:1\n    build:\n      context: .\n      args:\n        TOKEN_IN: ${HF_TOKEN}\n", ""},
	},
	"CMP-T08": {
		{"list depends_on", "services:\n  default:\n    image: x:1\n    depends_on: [prov]\n  prov:\n    provider: {type: model, options: {model: x}}\n", ""},
	},
	"HELM-H01": {
		{"CLUSTER_DEFAULT", "services:\n  default:\n    image: x:1\n    runtimeClassName: CLUSTER_DEFAULT\n", "format=helm"},
	},
	"HELM-N01": {
		{"world entity", "allowEntities: [world]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"world-ipv6 entity", "allowEntities: [world-ipv6]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"entity in another case", "allowEntities: [\" World \"]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"universe CIDR v6", "allowCIDR: [\"::/0\"]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"universe split in halves", "allowCIDR: [\"0.0.0.0/1\", \"128.0.0.0/1\"]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
	},
	"K8S-N04": {
		{"all of link-local", "allowCIDR: [169.254.0.0/16]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"bare address", "allowCIDR: [\"169.254.169.254\"]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"AWS IPv6 IMDS range", "allowCIDR: [\"fd00:ec2::/32\"]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"Alibaba in CGNAT space", "allowCIDR: [100.64.0.0/10]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"policy in additionalResources", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: networking.k8s.io/v1\n    kind: NetworkPolicy\n    metadata: {name: m}\n    spec:\n      podSelector: {}\n      egress:\n        - to: [{ipBlock: {cidr: 169.254.169.254/32}}]\n", "format=helm"},
	},
	"HELM-N07": {
		{"resolver inside a /24", "allowCIDR: [1.1.1.0/24]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"IPv6 resolver", "allowCIDR: [\"2606:4700:4700::1111/128\"]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"a /8", "allowCIDR: [52.0.0.0/8]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"private /8", "allowCIDR: [10.0.0.0/8]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
	},
	"K8S-N02": {
		{"world-ipv4", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: cilium.io/v2\n    kind: CiliumNetworkPolicy\n    metadata: {name: o}\n    spec:\n      endpointSelector: {matchLabels: {inspect/service: default}}\n      egress:\n        - toEntities: [world-ipv4]\n", "format=helm"},
		{"toCIDR /0", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: cilium.io/v2\n    kind: CiliumNetworkPolicy\n    metadata: {name: o}\n    spec:\n      endpointSelector: {}\n      egress:\n        - toCIDR: [0.0.0.0/0]\n", "format=helm"},
		{"toCIDRSet with except", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: cilium.io/v2\n    kind: CiliumNetworkPolicy\n    metadata: {name: o}\n    spec:\n      endpointSelector: {}\n      egress:\n        - toCIDRSet: [{cidr: 0.0.0.0/0, except: [10.0.0.0/8]}]\n", "format=helm"},
		{"ports only", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: cilium.io/v2\n    kind: CiliumNetworkPolicy\n    metadata: {name: o}\n    spec:\n      endpointSelector: {}\n      egress:\n        - toPorts: [{ports: [{port: \"443\"}]}]\n", "format=helm"},
		{"NetworkPolicy without to", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: networking.k8s.io/v1\n    kind: NetworkPolicy\n    metadata: {name: o}\n    spec:\n      podSelector: {}\n      policyTypes: [Egress]\n      egress:\n        - {}\n", "format=helm"},
		{"templated string", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - |\n    apiVersion: cilium.io/v2\n    kind: CiliumNetworkPolicy\n    metadata:\n      name: {{ .Release.Name }}-open\n    spec:\n      endpointSelector: {}\n      egress:\n        - toEntities: [all]\n", "format=helm"},
	},
	"K8S-T07": {
		{"docker config file", "services:\n  default:\n    image: x:1\n    volumes:\n      - name: d\n        hostPath: {path: /home/ci/.docker/config.json, type: File}\n", "format=helm"},
		{"ssh dir of another service", "services:\n  default:\n    image: x:1\n  target:\n    image: y:1\n    volumes:\n      - name: s\n        hostPath: {path: /root/.ssh}\n", "format=helm"},
	},
	"HELM-N02": {
		{"wildcard", "allowDomains: [\"*.github.com\"]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
	},
	"HELM-N03": {
		{"UDP 443 (QUIC)", "allowDomains: [a.example]\nallowDomainsPorts:\n  - {port: 443, protocol: UDP}\nservices:\n  default:\n    image: x:1\n", "format=helm"},
	},
	"HELM-N04": {
		{"host entity", "allowEntities: [host]\nservices:\n  default:\n    image: x:1\n", "format=helm"},
	},
	"HELM-T01": {
		{"with a named account", "automountServiceAccountToken: true\nserviceAccountName: controller\nservices:\n  default:\n    image: x:1\n", "format=helm"},
	},
	"K8S-H01": {
		{"init container", "services:\n  default:\n    image: x:1\n    initContainers:\n      - name: i\n        image: x:1\n        securityContext: {privileged: true}\n", "format=helm"},
	},
	"K8S-H03": {
		{"parent of the socket", "services:\n  default:\n    image: x:1\n    volumes:\n      - name: r\n        hostPath: {path: /var/run}\n", "format=helm"},
	},
	"K8S-H04": {
		{"lower case", "services:\n  default:\n    image: x:1\n    securityContext:\n      capabilities: {add: [sys_admin]}\n", "format=helm"},
	},
	"K8S-H08": {
		{"unset", "services:\n  default:\n    image: x:1\n    securityContext: {runAsNonRoot: true}\n", "format=helm"},
	},
	"K8S-T02": {
		{"default SA", "serviceAccountName: default\nservices:\n  default:\n    image: x:1\n", "format=helm"},
		{"cluster-admin binding", "serviceAccountName: sandbox\nservices:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: rbac.authorization.k8s.io/v1\n    kind: ClusterRoleBinding\n    metadata: {name: b}\n    roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n    subjects: [{kind: ServiceAccount, name: sandbox, namespace: ns}]\n", "format=helm"},
		{"wildcard role to the default account", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: rbac.authorization.k8s.io/v1\n    kind: Role\n    metadata: {name: r}\n    rules: [{apiGroups: [\"*\"], resources: [\"*\"], verbs: [\"*\"]}]\n  - apiVersion: rbac.authorization.k8s.io/v1\n    kind: RoleBinding\n    metadata: {name: b}\n    roleRef: {kind: Role, name: r}\n    subjects: [{kind: ServiceAccount, name: default}]\n", "format=helm"},
		{"secrets through the service-account group", "services:\n  default:\n    image: x:1\nadditionalResources:\n  - apiVersion: rbac.authorization.k8s.io/v1\n    kind: ClusterRole\n    metadata: {name: r}\n    rules: [{apiGroups: [\"\"], resources: [secrets], verbs: [list]}]\n  - apiVersion: rbac.authorization.k8s.io/v1\n    kind: ClusterRoleBinding\n    metadata: {name: b}\n    roleRef: {kind: ClusterRole, name: r}\n    subjects: [{kind: Group, name: \"system:serviceaccounts\"}]\n", "format=helm"},
		{"templated subject", "serviceAccountName: sb\nservices:\n  default:\n    image: x:1\nadditionalResources:\n  - |\n    apiVersion: rbac.authorization.k8s.io/v1\n    kind: RoleBinding\n    metadata: {name: b}\n    roleRef: {kind: ClusterRole, name: edit}\n    subjects:\n      - kind: ServiceAccount\n        name: {{ .Values.serviceAccountName }}\n", "format=helm"},
	},
	"K8S-T03": {
		{"secret reference", "services:\n  default:\n    image: x:1\n    env:\n      - name: MODEL\n        valueFrom: {secretKeyRef: {name: s, key: k}}\n", "format=helm"},
		{"value shape", "services:\n  default:\n    image: x:1\n    env:\n      - name: CONFIG\n        value: sk-abcdefghijklmnopqrstuvwxyz\n", "format=helm"},
	},
	"PVE-H01": {
		{"second device", "hostpci1: 0000:01:00.0,pcie=1\nmemory: 1024\n", "format=qm"},
		{"upper case key", "HostPCI0: 0000:01:00.0\nmemory: 1024\n", "format=qm"},
		{"space before the colon", "hostpci2 : mapping=gpu\nmemory: 1024\n", "format=qm"},
		{"vfio-pci in args", "args: -device vfio-pci,host=01:00.0\nmemory: 1024\n", "format=qm"},
	},
	"PVE-H03": {
		{"parallel port", "parallel0: /dev/parport0\nmemory: 1024\n", "format=qm"},
	},
	"PVE-H04": {
		{"args with netdev", "args: -netdev user,id=n0 -device virtio-net,netdev=n0\nmemory: 1024\n", "format=qm"},
	},
	"PVE-H05": {
		{"virtiofs", "virtiofs0: mapping=share\nmemory: 1024\n", "format=qm"},
		{"upper case virtiofs", "VirtioFS1: dirid=share\nmemory: 1024\n", "format=qm"},
		{"LXC mount point", "mp0: /srv/share,mp=/mnt/share\nmemory: 1024\n", "format=qm"},
		{"LXC raw mount entry", "lxc.mount.entry: /srv/data srv/data none bind 0 0\nmemory: 1024\n", "format=qm"},
		{"9p in args", "args: -virtfs local,path=/srv,mount_tag=h,security_model=passthrough\nmemory: 1024\n", "format=qm"},
	},
	"PVE-H02": {
		{"spaces around =", "usb0: host = 1234:5678\nmemory: 1024\n", "format=qm"},
		{"usb-host in args", "args: -device usb-host,vendorid=0x1234,productid=0x5678\nmemory: 1024\n", "format=qm"},
		{"upper case key", "USB1: host=1-2\nmemory: 1024\n", "format=qm"},
	},
	"PVE-H10": {
		{"virtio disk by id", "virtio1: /dev/disk/by-id/ata-X\nmemory: 1024\n", "format=qm"},
		{"file= option", "sata0: file=/dev/nvme0n1,size=100G\nmemory: 1024\n", "format=qm"},
		{"upper case key", "IDE2: /dev/sdc\nmemory: 1024\n", "format=qm"},
		{"args drive", "args: -drive file=/dev/sdb,if=virtio,format=raw\nmemory: 1024\n", "format=qm"},
		{"LXC mount point of a device", "mp1: /dev/sdb1,mp=/data\nmemory: 1024\n", "format=qm"},
	},
	"PVE-N01": {
		{"no bridge", "net0: virtio=BC:24:11:00:00:01,firewall=1\nmemory: 1024\n", "format=qm"},
	},
	"PVE-N02": {
		{"firewall on but LAN bridge", "net0: virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1\nmemory: 1024\n", "format=qm"},
	},
	"PVE-N03": {
		{"explicit firewall=0", "net0: virtio=BC:24:11:00:00:01,bridge=vnet1,firewall=0\nmemory: 1024\n", "format=qm"},
	},
}
