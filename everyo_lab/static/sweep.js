// everyo-lab 0.1.0 | sweep.js | sources sha256:60e86f3476e01f50 | built by js/build.mjs (esbuild 0.28.2) from js/src: do not edit

const __everyo_impl = ((globalThis.__everyoModules ??= {})["sweep:60e86f3476e01f50"] ??= (() => {
var __everyo_bundle=(()=>{var __defProp=Object.defineProperty;var __getOwnPropDesc=Object.getOwnPropertyDescriptor;var __getOwnPropNames=Object.getOwnPropertyNames;var __hasOwnProp=Object.prototype.hasOwnProperty;var __export=(target,all)=>{for(var name in all)__defProp(target,name,{get:all[name],enumerable:true})};var __copyProps=(to,from,except,desc)=>{if(from&&typeof from==="object"||typeof from==="function"){for(let key of __getOwnPropNames(from))if(!__hasOwnProp.call(to,key)&&key!==except)__defProp(to,key,{get:()=>from[key],enumerable:!(desc=__getOwnPropDesc(from,key))||desc.enumerable})}return to};var __toCommonJS=mod=>__copyProps(__defProp({},"__esModule",{value:true}),mod);var sweep_widget_exports={};__export(sweep_widget_exports,{default:()=>sweep_widget_default});function downloadBytes(doc,filename,data,mime="application/json"){const blob=new Blob([data],{type:mime});const url=URL.createObjectURL(blob);const link=doc.createElement("a");link.href=url;link.download=filename;link.style.display="none";doc.body.appendChild(link);link.click();link.remove();setTimeout(()=>URL.revokeObjectURL(url),1e4)}function isDownloadMessage(msg,buffers){return Boolean(msg&&msg.type==="download"&&msg.filename&&buffers&&buffers.length>0)}var CACHE="__everyoPlotly";var RETRY_MS=6e4;function plotlyCache(g=globalThis){if(!g[CACHE]){const cache={asked:false,askedAt:0,plotly:null,loading:false};cache.promise=new Promise((resolve,reject)=>{cache.resolve=resolve;cache.reject=reject});if(g.Plotly&&typeof g.Plotly.react==="function"){cache.plotly=g.Plotly;cache.resolve(g.Plotly)}g[CACHE]=cache}return g[CACHE]}function loadPlotly(model,g=globalThis,now=Date.now()){const cache=plotlyCache(g);if(!cache.plotly&&g.Plotly&&typeof g.Plotly.react==="function"){cache.plotly=g.Plotly;cache.resolve(g.Plotly)}if(!cache.plotly&&(!cache.asked||now-cache.askedAt>RETRY_MS)){cache.asked=true;cache.askedAt=now;model.send({type:"plotly"})}return cache.promise}function failPlotly(error,g=globalThis){const cache=plotlyCache(g);if(cache.plotly)return;cache.error=String(error);cache.reject(new Error(cache.error))}function wrapUmd(text){return`const module = { exports: {} }; const exports = module.exports;
${text}
export default module.exports;
`}function bufferText(buf){const bytes=buf instanceof ArrayBuffer?new Uint8Array(buf):new Uint8Array(buf.buffer,buf.byteOffset,buf.byteLength);return new TextDecoder("utf-8").decode(bytes)}async function receivePlotly(buffer,g=globalThis){const cache=plotlyCache(g);if(cache.plotly||cache.loading)return cache.promise;cache.loading=true;const blob=new Blob([wrapUmd(bufferText(buffer))],{type:"text/javascript"});const url=URL.createObjectURL(blob);try{const mod=await import(url);cache.plotly=mod.default&&typeof mod.default.react==="function"?mod.default:g.Plotly;cache.resolve(cache.plotly)}catch(err){cache.loading=false;console.error("everyo: could not load plotly.js",err)}finally{URL.revokeObjectURL(url)}return cache.promise}var CSS=`
.everyo-widget { font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); color: var(--jp-ui-font-color1, #222); }
.everyo-dashboard { content-visibility: auto; contain-intrinsic-size: auto 600px; }
.everyo-table { border-collapse: collapse; width: 100%; }
.everyo-table th { cursor: pointer; text-align: left; padding: 2px 8px; user-select: none;
  border-bottom: 1px solid var(--jp-border-color1, #bbb); white-space: nowrap; }
.everyo-table td { padding: 2px 8px; position: relative; white-space: nowrap;
  border-bottom: 1px solid var(--jp-border-color3, #eee); }
.everyo-share-bar { position: absolute; left: 0; top: 2px; bottom: 2px; z-index: 0;
  background: var(--jp-brand-color2, #90caf9); opacity: 0.45; }
.everyo-warning { margin: 4px 0; color: var(--jp-warn-color1, #b26a00); }
.everyo-controls { display: flex; gap: 8px; align-items: center; margin-bottom: 4px; }
.everyo-export { display: flex; gap: 8px; align-items: center; }
.everyo-export-button { padding: 4px 10px; cursor: pointer; }
.everyo-export-status { color: var(--jp-ui-font-color2, #555); }
.everyo-picker { min-width: 24em; }
.everyo-header { padding: 4px 0; }
.everyo-notes { margin: 2px 0 4px; padding-left: 1.4em; }
.everyo-steps { margin: 4px 0; }
.everyo-step-input { width: 6em; }
.everyo-step-table { width: auto; }
.everyo-flame-box { position: relative; min-height: 40px; }
.everyo-flame-canvas { position: absolute; left: 0; top: 0; z-index: 0; pointer-events: none; }
.everyo-flame-axes { position: absolute; left: 0; top: 0; z-index: 0; pointer-events: none; }
.everyo-flame-axes[hidden] { display: none; }
.everyo-flame { position: relative; z-index: 1; }
.everyo-flame-message { position: absolute; left: 60px; top: 10px; z-index: 2;
  color: var(--jp-ui-font-color2, #555); }
.everyo-tooltip { position: absolute; z-index: 10; pointer-events: none; max-width: 420px;
  padding: 4px 8px; border-radius: 3px; font-size: 12px; line-height: 1.35; white-space: nowrap;
  background: var(--jp-layout-color0, #fff); color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color1, #bbb); box-shadow: 0 1px 4px rgba(0,0,0,0.25); }
.everyo-icicle { margin-top: 8px; }
.everyo-memory { margin-top: 0; }
.everyo-picker-row:not([hidden]) { display: flex; gap: 12px; align-items: center; margin-bottom: 4px; }
.everyo-compare { margin-top: 10px; }
.everyo-compare-only > :not(.everyo-compare):not(style) { display: none !important; }
.everyo-compare-header { font-weight: 600; padding: 4px 0; }
.everyo-compare-title { color: var(--jp-ui-font-color2, #555); margin-top: 6px; }
.everyo-diff-holder { overflow-x: auto; }
.everyo-diff-table { width: auto; }
.everyo-table .everyo-num { text-align: right; font-variant-numeric: tabular-nums; }
.everyo-verdict-faster { color: var(--jp-success-color1, #1a7f37); }
.everyo-verdict-slower { color: var(--jp-error-color1, #cf222e); }
.everyo-verdict-within-noise, .everyo-verdict-negligible-change, .everyo-verdict-too-little-data { color: var(--jp-ui-font-color2, #555); }
.everyo-verdict-inconclusive-the-machine-was-busy { color: var(--jp-warn-color1, #9a6700); }
.everyo-table-holder tbody tr, .everyo-flame { cursor: pointer; }
.everyo-table tr.everyo-selected td { background: var(--jp-layout-color2, #eef3f8); }
.everyo-why { margin: 6px 0; padding: 6px 8px; border: 1px solid var(--jp-border-color2, #ccc); }
.everyo-why-head { display: flex; gap: 10px; }
.everyo-why-close { margin-left: auto; }
.everyo-why-message { color: var(--jp-warn-color1, #b26a00); }
.everyo-why .everyo-table { width: auto; margin: 4px 0; }
.everyo-why-num { text-align: right; }
.everyo-why td:last-child, .everyo-why code { font-family: var(--jp-code-font-family, monospace); white-space: pre; }
.everyo-why-node { margin-left: 1.1em; white-space: nowrap; }
.everyo-why summary > * { margin-right: 8px; }
.everyo-why-outside { margin: 2px 0 4px; }
.everyo-why-outside-link { padding: 2px 8px; cursor: pointer; }
`;var STYLE_ID="everyo-widget-style";function addStyle(doc,el){let style=doc.getElementById(STYLE_ID);if(!style){style=doc.createElement("style");style.id=STYLE_ID;(doc.head||el).appendChild(style)}if(style.textContent!==CSS)style.textContent=CSS;el.classList.add("everyo-widget")}var NO_VALUE="–";var missing=v=>v===null||v===void 0||Number.isNaN(v);function secondsText(s){if(missing(s))return NO_VALUE;const tenths=Math.floor(Math.max(s,0)*10+.5);return`${Math.floor(tenths/10)}.${tenths%10} s`}function progressText(progress,elapsedS=0){const seconds=secondsText(elapsedS);if(progress.rechecking&&progress.rechecking.length){return`re-measuring batch ${progress.rechecking.join(", ")} interleaved, ${seconds}`}const of=progress.total?` of ${progress.total}`:"";return`point ${progress.index}${of}, batch ${progress.batch_size}, ${seconds}`}function points(n){return n===1?"1 point":`${n} points`}function progressLine(report,elapsedS=0){const r=report||{};const done=(r.rows||[]).length;if(r.status==="running"&&r.progress)return progressText(r.progress,elapsedS);if(r.status==="ready"||!r.status)return"not started";if(r.status==="stopped")return`stopped after ${points(done)}; the other sizes were not measured`;if(r.status==="failed")return`failed after ${points(done)}: ${r.error||""}`;return`${points(done)} measured`}function buttonStates(running,stopHint=""){return{run:!running,stop:Boolean(running)&&!stopHint,stopTitle:running?stopHint:""}}function tableRows(report){const r=report||{};const rec=r.recommendation||{};const cells=r.cells||[];return(r.rows||[]).map((row,i)=>{const ok=row.status==="ok";const cls=!ok?"failed":row.flag?"flagged":row.batch_size===rec.recommended?"recommended":"";return{cls,title:ok?row.note||"":row.message||"",cells:cells[i]||[]}})}function renderSweepTable(doc,report){const table=doc.createElement("table");table.className="everyo-table everyo-sweep-table";const head=doc.createElement("tr");for(const text of report&&report.headers||[]){const th=doc.createElement("th");th.textContent=text;head.appendChild(th)}const thead=doc.createElement("thead");thead.appendChild(head);const body=doc.createElement("tbody");for(const row of tableRows(report)){const tr=doc.createElement("tr");if(row.cls)tr.className=`everyo-sweep-${row.cls}`;if(row.title)tr.title=row.title;row.cells.forEach((text,i)=>{const td=doc.createElement("td");td.textContent=text;if(i!==1&&i!==7)td.className="everyo-num";tr.appendChild(td)});body.appendChild(tr)}table.append(thead,body);return table}function detectTheme(body,fallback="light"){if(!body)return fallback;const flag=body.dataset?body.dataset.jpThemeLight:void 0;if(flag==="true")return"light";if(flag==="false")return"dark";const classes=body.classList;if(classes&&classes.contains("jp-theme-dark"))return"dark";if(classes&&classes.contains("jp-theme-light"))return"light";return fallback}function watchTheme(doc,onChange){const body=doc.body;let current=detectTheme(body);onChange(current);if(typeof MutationObserver==="undefined"||!body)return()=>{};const observer=new MutationObserver(()=>{const next=detectTheme(body);if(next!==current){current=next;onChange(next)}});observer.observe(body,{attributes:true,attributeFilter:["data-jp-theme-light","class"]});return()=>observer.disconnect()}function syncTheme(model,doc){return watchTheme(doc,theme=>{if(model.get("theme")!==theme){model.set("theme",theme);model.save_changes()}})}var CHARTS=["throughput","latency","memory"];var CONFIG={displaylogo:false,responsive:true,modeBarButtonsToRemove:["select2d","lasso2d"]};var CSS2=`
.everyo-sweep-bar { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 4px 0; }
.everyo-sweep-title { font-weight: 600; }
.everyo-sweep-progress { color: var(--jp-ui-font-color2, #555); }
.everyo-sweep-rec { border-left: 3px solid #2ca02c; padding: 2px 8px; margin: 4px 0; }
.everyo-sweep-rec-none { border-left-color: #d4a017; }
.everyo-sweep-charts { display: flex; flex-wrap: wrap; gap: 8px; }
.everyo-sweep-chart { flex: 1 1 300px; min-width: 280px; min-height: 260px; overflow: hidden; }
.everyo-sweep-failed td { color: var(--jp-error-color1, #d62728); }
.everyo-sweep-flagged td { color: var(--jp-warn-color1, #9a6700); }
.everyo-sweep-recommended td { font-weight: 600; }
.everyo-num { text-align: right; font-variant-numeric: tabular-nums; }
.everyo-notes { margin: 2px 0 4px; padding-left: 1.4em; color: var(--jp-ui-font-color2, #555); }
.everyo-sweep-table td:last-child { white-space: normal; min-width: 16em; }
`;function initialize({model}){const onMessage=(msg,buffers)=>{if(!msg)return;if(msg.type==="plotly"){if(msg.error)failPlotly(msg.error);else if(buffers&&buffers.length)receivePlotly(buffers[0])}else if(isDownloadMessage(msg,buffers)){const mime=msg.filename.endsWith(".csv")?"text/csv":"application/json";downloadBytes(document,msg.filename,buffers[0],mime)}};model.on("msg:custom",onMessage);return()=>model.off("msg:custom",onMessage)}function button(doc,text,cls,onClick){const b=doc.createElement("button");b.className=`jp-Button everyo-sweep-${cls}`;b.textContent=text;b.addEventListener("click",onClick);return b}function render({model,el}){const doc=el.ownerDocument||document;el.classList.add("everyo-sweep");addStyle(doc,el);const style=doc.createElement("style");style.textContent=CSS2;const bar=doc.createElement("div");bar.className="everyo-sweep-bar";const title=doc.createElement("span");title.className="everyo-sweep-title";const progress=doc.createElement("span");progress.className="everyo-sweep-progress";const run=button(doc,"Run","run",()=>model.send({type:"run"}));const stop=button(doc,"Stop","stop",()=>{stop.disabled=true;model.send({type:"stop"})});const csv=button(doc,"Export CSV","csv",()=>model.send({type:"export",format:"csv"}));const json=button(doc,"Export JSON","json",()=>model.send({type:"export",format:"json"}));const exportStatus=doc.createElement("span");exportStatus.className="everyo-export-status";bar.append(title,run,stop,csv,json,progress,exportStatus);const rec=doc.createElement("div");rec.className="everyo-sweep-rec";const notes=doc.createElement("ul");notes.className="everyo-notes";const error=doc.createElement("div");error.className="everyo-warning";const charts=doc.createElement("div");charts.className="everyo-sweep-charts";const divs=Object.fromEntries(CHARTS.map(key=>{const div=doc.createElement("div");div.className=`everyo-sweep-chart everyo-sweep-${key}`;charts.appendChild(div);return[key,div]}));const tableBox=doc.createElement("div");el.append(style,bar,error,rec,notes,charts,tableBox);let plotly=null;let redraws=0;let pointKey="";let pointStart=0;let ticker=null;const showProgress=()=>{const report=model.get("report")||{};progress.textContent=progressLine(report,(performance.now()-pointStart)/1e3)};const onReport=()=>{const report=model.get("report")||{};title.textContent=report.title||"Batch-size sweep";const p=report.status==="running"?report.progress:null;const key=p?`${p.index}:${p.batch_size}`:"";if(key!==pointKey){pointKey=key;pointStart=performance.now()-1e3*(p&&p.elapsed_s||0);if(ticker)clearInterval(ticker);ticker=p?setInterval(showProgress,200):null}showProgress();const rtext=(report.recommendation||{}).text||"";rec.textContent=rtext;rec.hidden=!rtext;const none=(report.recommendation||{}).recommended==null;rec.classList.toggle("everyo-sweep-rec-none",none&&report.status!=="running");notes.replaceChildren(...(report.notes||[]).map(text=>{const li=doc.createElement("li");li.textContent=text;return li}));notes.hidden=!(report.notes||[]).length;error.textContent=report.error?`error: ${report.error}`:"";error.hidden=!report.error;tableBox.replaceChildren(renderSweepTable(doc,report));el.dataset.status=report.status||"";el.dataset.rows=String((report.rows||[]).length)};const onRunning=()=>{const state=buttonStates(model.get("running"),model.get("stop_hint")||"");run.disabled=!state.run;stop.disabled=!state.stop;stop.title=state.stopTitle};const onExport=()=>{exportStatus.textContent=model.get("export_status")||""};const draw=()=>{if(!plotly)return;const figures=model.get("charts")||{};for(const key of CHARTS){const fig=figures[key];if(!fig)continue;const width=divs[key].clientWidth;const layout=width>0?{...fig.layout,width}:fig.layout;plotly.react(divs[key],fig.data,layout,CONFIG)}const first=(figures.throughput||{data:[]}).data[0];el.dataset.points=String(first&&first.x?first.x.length:0);redraws+=1;el.dataset.redraws=String(redraws)};let widths="";const resized=typeof ResizeObserver==="undefined"?null:new ResizeObserver(()=>{const now=CHARTS.map(key=>divs[key].clientWidth).join(",");if(now!==widths){widths=now;draw()}});if(resized)resized.observe(charts);const bindings=[["report",onReport],["running",onRunning],["stop_hint",onRunning],["export_status",onExport],["charts",draw]];for(const[name,fn]of bindings)model.on(`change:${name}`,fn);const stopTheme=syncTheme(model,doc);onReport();onRunning();onExport();let closed=false;el.dataset.plotly="loading";loadPlotly(model).then(p=>{if(closed)return;plotly=p;el.dataset.plotly="loaded";draw()},err=>{if(closed)return;el.dataset.plotly="failed";error.textContent=`no charts: ${err.message}`;error.hidden=false});return()=>{closed=true;if(ticker)clearInterval(ticker);if(resized)resized.disconnect();stopTheme();for(const[name,fn]of bindings)model.off(`change:${name}`,fn);if(plotly)for(const key of CHARTS)plotly.purge(divs[key])}}var sweep_widget_default={initialize,render};return __toCommonJS(sweep_widget_exports);})();
return __everyo_bundle.default;
})());
export default __everyo_impl;
