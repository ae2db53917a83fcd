<#
.SYNOPSIS
  Installs Svc's edge agent from this release folder (svc-<version>-win-x64\) as the Windows service
  "svc", run by WinSW under the virtual account NT SERVICE\svc. docs/install.md explains each step.

.DESCRIPTION
  Run it in an elevated PowerShell from the unpacked archive. Again on an upgrade: the service is
  stopped, the executable replaced, the service started again; the config and the data folder (with
  the local queue) are kept.
    %ProgramFiles%\Svc    svc.exe, svc-service.exe (WinSW) and svc-service.xml, LICENSE, notices
    %ProgramData%\Svc     svc.yaml (copied only if absent), certs\, the data folder (queue, crash
                          dumps) and logs\; NT SERVICE\svc may modify it

  WinSW is not in the archive: download WinSW-x64.exe (2.x) from
  https://github.com/winsw/winsw/releases and put it beside this script, or name it with -WinSW.

.PARAMETER WinSW
  The WinSW 2.x executable (default: WinSW-x64.exe beside this script).

.PARAMETER NoStart
  Register the service but do not start it (e.g. to edit the config first).
#>
param(
  [string]$WinSW = (Join-Path $PSScriptRoot 'WinSW-x64.exe'),
  [switch]$NoStart
)
$ErrorActionPreference = 'Stop'

$principal = New-Object Security.Principal.WindowsPrincipal([Security.Principal.WindowsIdentity]::GetCurrent())
if (-not $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)) {
  throw 'install.ps1: run it in an elevated PowerShell (Run as administrator)'
}
foreach ($file in 'svc.exe', 'svc.yaml', 'svc-service.xml', 'LICENSE', 'THIRD-PARTY-NOTICES.txt', 'INSTALL.md') {
  if (-not (Test-Path (Join-Path $PSScriptRoot $file))) {
    throw "install.ps1: $PSScriptRoot\$file is missing: unpack the whole archive"
  }
}
if (-not (Test-Path $WinSW)) {
  throw "install.ps1: WinSW not found at ${WinSW}: download WinSW-x64.exe from https://github.com/winsw/winsw/releases (2.x) beside this script, or pass -WinSW <path>"
}

$program = Join-Path $env:ProgramFiles 'Svc'
$data = Join-Path $env:ProgramData 'Svc'
$config = Join-Path $data 'svc.yaml'
$account = 'NT SERVICE\svc'

$existing = Get-Service -Name 'svc' -ErrorAction SilentlyContinue
if ($existing -and $existing.Status -ne 'Stopped') {
  Write-Host 'stopping svc to replace its executable (its queue stays in the data folder)'
  Stop-Service -Name 'svc'
}

foreach ($folder in $program, $data, (Join-Path $data 'certs'), (Join-Path $data 'logs')) {
  New-Item -ItemType Directory -Force -Path $folder | Out-Null
}
foreach ($file in 'svc.exe', 'svc-service.xml', 'LICENSE', 'THIRD-PARTY-NOTICES.txt', 'INSTALL.md') {
  Copy-Item -Force (Join-Path $PSScriptRoot $file) (Join-Path $program $file)
}
# WinSW reads the definition with its own base name beside it.
Copy-Item -Force $WinSW (Join-Path $program 'svc-service.exe')
Write-Host "installed $program\svc.exe"
if (Test-Path $config) {
  Write-Host "kept $config (the shipped one is $PSScriptRoot\svc.yaml)"
} else {
  Copy-Item (Join-Path $PSScriptRoot 'svc.yaml') $config
  Write-Host "wrote ${config}: set the certificates and servers in it"
}

if (-not $existing) {
  & (Join-Path $program 'svc-service.exe') install
  if ($LASTEXITCODE -ne 0) { throw "install.ps1: WinSW could not register the service (exit $LASTEXITCODE)" }
  # A virtual account: no password, no rights beyond what is granted below.
  & sc.exe config svc obj= $account
  if ($LASTEXITCODE -ne 0) { throw "install.ps1: sc.exe could not set the service account $account (exit $LASTEXITCODE)" }
  Write-Host "registered the service svc, run as $account"
}
# The account exists once the service does: it may modify the data folder and nothing else.
& icacls.exe $data /grant "${account}:(OI)(CI)M" /T /Q
if ($LASTEXITCODE -ne 0) { throw "install.ps1: icacls could not grant $account access to $data (exit $LASTEXITCODE)" }

& (Join-Path $program 'svc.exe') validate-config --config $config
if ($LASTEXITCODE -ne 0) {
  Write-Host "the config is not valid yet: edit $config, then Start-Service svc"
} elseif ($NoStart) {
  Write-Host 'not started (-NoStart): Start-Service svc'
} else {
  Start-Service -Name 'svc'
  Write-Host 'started svc'
}
